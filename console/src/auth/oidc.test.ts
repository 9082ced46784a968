import { describe, expect, it } from "vitest";
import { challengeOf, newVerifier } from "./oidc";

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
