// The one API client: every request of the console goes through it, so the
// bearer token and the 401 handling live in one place.
import createClient, { type Middleware } from "openapi-fetch";
import type { paths } from "./schema";
import { clearToken, getToken } from "../auth/token";

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();

/** Called when the API answers 401 (the token was cleared): back to sign-in. */
export function onUnauthorized(listener: Listener): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

export const auth: Middleware = {
  onRequest({ request }) {
    const token = getToken();
    if (token) request.headers.set("Authorization", `Bearer ${token}`);
    return request;
  },
  onResponse({ response }) {
    if (response.status === 401) {
      clearToken();
      for (const listener of unauthorizedListeners) listener();
    }
    return response;
  },
};

/** Same origin as the console by default: it is served by the platform. */
export function createApiClient(baseUrl = globalThis.location?.origin ?? "") {
  const client = createClient<paths>({ baseUrl });
  client.use(auth);
  return client;
}

export const api = createApiClient();
