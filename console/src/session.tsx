// Who is signed in and what they may do. `/console/config.json` (served
// with the console) says how to sign in and the company's time zone; `GET /me`
// lists the operations the caller's roles allow, and what they grant per
// area, from the API's one permission table, so the console never keeps a
// copy of it.
import { createContext, type ComponentChildren } from "preact";
import { useContext } from "preact/hooks";
import type { components } from "./api/schema";

export interface ConsoleConfig {
  signIn: "development" | "oidc" | "token";
  oidc: { issuer: string; clientId: string } | null;
  businessTimeZone: string;
  rolesClaim: string;
}

export type Me = components["schemas"]["Me"];
/** An area of the platform, as `GET /me`'s `permissions` names it. */
export type Area = keyof components["schemas"]["Permissions"];
/** What a role may do in an area (the API's access levels). */
export type Access = "read" | "write" | "delete" | "manage";

export interface Session {
  config: ConsoleConfig;
  me: Me;
  /** Whether the caller may call `method path` (the path as the API describes it). */
  may: (method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE", path: string) => boolean;
  /**
   * Whether the caller's roles grant `access` in `area`: for what a route
   * alone does not show (cancelling a work order needs maintenance manage).
   */
  grants: (area: Area, access: Access) => boolean;
  signOut: () => void;
}

export async function loadConfig(signal?: AbortSignal): Promise<ConsoleConfig> {
  const response = await fetch(`${import.meta.env.BASE_URL}config.json`, { signal });
  if (!response.ok) throw new Error(`config.json: HTTP ${response.status}`);
  return (await response.json()) as ConsoleConfig;
}

export function makeSession(config: ConsoleConfig, me: Me, signOut: () => void): Session {
  const allowed = new Set(me.operations);
  return {
    config,
    me,
    may: (method, path) => allowed.has(`${method} ${path}`),
    grants: (area, access) => me.permissions[area].includes(access),
    signOut,
  };
}

const SessionContext = createContext<Session | null>(null);

export function SessionProvider({ session, children }: { session: Session; children: ComponentChildren }) {
  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error("useSession outside SessionProvider");
  return session;
}
