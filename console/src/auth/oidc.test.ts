import { describe, expect, it } from "vitest";
import { challengeOf, checkDiscovery, finishSignIn, newVerifier } from "./oidc";

describe("PKCE", () => {
  it("derives the S256 challenge of RFC 7636's example verifier", async () => {
    // RFC 7636, appendix B.
    expect(await challengeOf("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")).toBe(
      "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    );
  });

  it("makes verifiers of 43 base64url characters, each new", () => {
    const a = newVerifier();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(newVerifier()).not.toBe(a);
  });
});

describe("discovery", () => {
  const issuer = "https://id.example.com/realms/villa";
  const endpoints = { authorization_endpoint: `${issuer}/auth`, token_endpoint: `${issuer}/token` };

  it("accepts the configured issuer's document", () => {
    expect(checkDiscovery(issuer, { issuer, ...endpoints }).token_endpoint).toBe(`${issuer}/token`);
  });

  it("refuses another issuer's document, or one without endpoints", () => {
    expect(() => checkDiscovery(issuer, { issuer: "https://evil.example", ...endpoints })).toThrow(/another issuer/);
    expect(() => checkDiscovery(issuer, { issuer })).toThrow(/no authorization or token endpoint/);
  });
});

describe("finishing the sign-in", () => {
  const settings = { issuer: "https://id.example.com", clientId: "villa-console" };
  const store = new Map<string, string>();
  globalThis.sessionStorage = {
    getItem: (k: string) => store.get(k) ?? null,
    setItem: (k: string, v: string) => void store.set(k, v),
    removeItem: (k: string) => void store.delete(k),
  } as Storage;

  it("refuses a state that is not the one this tab sent, and forgets the attempt", async () => {
    store.set("villa.console.oidc", JSON.stringify({ verifier: "v", state: "mine", returnTo: "/" }));
    await expect(finishSignIn(settings, new URLSearchParams("code=c&state=theirs"))).rejects.toThrow(/state does not match/);
    expect(store.has("villa.console.oidc")).toBe(false);
  });

  it("refuses a sign-in this tab did not start", async () => {
    await expect(finishSignIn(settings, new URLSearchParams("code=c&state=s"))).rejects.toThrow(/not started from this tab/);
  });

  it("reports the provider's refusal in its words", async () => {
    store.set("villa.console.oidc", JSON.stringify({ verifier: "v", state: "s", returnTo: "/" }));
    await expect(
      finishSignIn(settings, new URLSearchParams("error=access_denied&error_description=User+cancelled&state=s")),
    ).rejects.toThrow(/refused the sign-in: User cancelled/);
  });
});
