// OpenID Connect authorization code with PKCE (RFC 7636), as a public client:
// the console redirects to the identity provider, which sends the user back
// to /console/signed-in with a code that only this tab (holding the verifier)
// can exchange for tokens. The access token is what the API verifies.

export interface OidcSettings {
  issuer: string;
  clientId: string;
}

interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
}

const PENDING = "villa.console.oidc";

function base64Url(bytes: Uint8Array): string {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** A fresh code verifier: 32 random bytes, 43 characters of base64url. */
export function newVerifier(): string {
  return base64Url(crypto.getRandomValues(new Uint8Array(32)));
}

/** The S256 code challenge of `verifier`: base64url(SHA-256(verifier)). */
export async function challengeOf(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return base64Url(new Uint8Array(digest));
}

export async function discover(issuer: string, signal?: AbortSignal): Promise<Discovery> {
  // OpenID Connect Discovery §4: the issuer less a trailing slash, then the well-known path.
  const response = await fetch(`${issuer.replace(/\/$/, "")}/.well-known/openid-configuration`, { signal });
  if (!response.ok) throw new Error(`the identity provider's discovery answered HTTP ${response.status}`);
  return checkDiscovery(issuer, (await response.json()) as Partial<Discovery>);
}

/**
 * The discovery document, checked as OpenID Connect Discovery §4.3 says: its
 * `issuer` is exactly the one configured (else another provider's answer
 * could stand in), and it names both endpoints.
 */
export function checkDiscovery(issuer: string, doc: Partial<Discovery>): Discovery {
  if (doc.issuer !== issuer) {
    throw new Error(`the identity provider's discovery names another issuer (${String(doc.issuer)}, not ${issuer})`);
  }
  if (!doc.authorization_endpoint || !doc.token_endpoint) {
    throw new Error("the identity provider's discovery names no authorization or token endpoint");
  }
  return doc as Discovery;
}

export function redirectUri(): string {
  return `${location.origin}${import.meta.env.BASE_URL}signed-in`;
}

/** Sends the browser to the identity provider's sign-in; `returnTo` is the console path to come back to. */
export async function startSignIn(settings: OidcSettings, returnTo: string): Promise<void> {
  const { authorization_endpoint } = await discover(settings.issuer);
  const verifier = newVerifier();
  const state = newVerifier();
  sessionStorage.setItem(PENDING, JSON.stringify({ verifier, state, returnTo }));
  const url = new URL(authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: settings.clientId,
    redirect_uri: redirectUri(),
    scope: "openid profile",
    state,
    code_challenge: await challengeOf(verifier),
    code_challenge_method: "S256",
  }).toString();
  location.assign(url.toString());
}

/**
 * Finishes the sign-in on /signed-in: checks `state`, exchanges the code with
 * the verifier, and answers the access token and the path to return to.
 */
export async function finishSignIn(
  settings: OidcSettings,
  query: URLSearchParams,
): Promise<{ accessToken: string; returnTo: string }> {
  const pending = sessionStorage.getItem(PENDING);
  sessionStorage.removeItem(PENDING);
  const error = query.get("error");
  if (error) throw new Error(`the identity provider refused the sign-in: ${query.get("error_description") ?? error}`);
  if (!pending) throw new Error("this sign-in was not started from this tab; sign in again");
  const { verifier, state, returnTo } = JSON.parse(pending) as { verifier: string; state: string; returnTo: string };
  if (query.get("state") !== state) throw new Error("the sign-in's state does not match; sign in again");
  const code = query.get("code");
  if (!code) throw new Error("the identity provider sent no code");
  const { token_endpoint } = await discover(settings.issuer);
  const response = await fetch(token_endpoint, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: redirectUri(),
      client_id: settings.clientId,
      code_verifier: verifier,
    }),
  });
  const body = (await response.json().catch(() => ({}))) as { access_token?: string; error?: string; error_description?: string };
  if (!response.ok || !body.access_token) {
    throw new Error(`the token exchange failed: ${body.error_description ?? body.error ?? `HTTP ${response.status}`}`);
  }
  return { accessToken: body.access_token, returnTo: returnTo || "/" };
}
