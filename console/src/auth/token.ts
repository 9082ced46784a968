// The bearer token, kept in sessionStorage: it survives a reload but not the
// tab, and the console never sees credentials itself (tokens come from the
// identity provider, issue 30).
const KEY = "villa.console.token";

export function getToken(): string | null {
  return sessionStorage.getItem(KEY);
}

export function setToken(token: string): void {
  sessionStorage.setItem(KEY, token);
}

export function clearToken(): void {
  sessionStorage.removeItem(KEY);
}

/**
 * Whether the JWT's `exp` (seconds since the epoch) is at or before `now`
 * (milliseconds). The signature is not verified: the API does that; this
 * only spares a request that would be refused. A token that cannot be read,
 * or has no numeric `exp`, counts as expired.
 */
export function isExpired(token: string, now: number = Date.now()): boolean {
  const payload = token.split(".")[1];
  if (!payload) return true;
  try {
    const base64 = payload.replace(/-/g, "+").replace(/_/g, "/");
    const { exp } = JSON.parse(atob(base64.padEnd(Math.ceil(base64.length / 4) * 4, "="))) as {
      exp?: unknown;
    };
    return typeof exp !== "number" || exp * 1000 <= now;
  } catch {
    return true;
  }
}
