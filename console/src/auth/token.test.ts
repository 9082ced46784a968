import { describe, expect, it } from "vitest";
import { isExpired } from "./token";

/** An unsigned JWT with this payload; isExpired never checks signatures. */
function jwt(payload: object): string {
  const part = (o: object) =>
    btoa(JSON.stringify(o)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  return `${part({ alg: "none" })}.${part(payload)}.`;
}

describe("isExpired", () => {
  const now = Date.UTC(2030, 0, 1);

  it("reads exp in seconds against now in milliseconds", () => {
    expect(isExpired(jwt({ exp: now / 1000 + 60 }), now)).toBe(false);
    expect(isExpired(jwt({ exp: now / 1000 }), now)).toBe(true);
    expect(isExpired(jwt({ exp: now / 1000 - 1 }), now)).toBe(true);
  });

  it("decodes base64url payloads (- and _, no padding)", () => {
    // This payload's base64 holds "+" and "/", which base64url spells "-" and "_".
    expect(isExpired(jwt({ sub: "~~~?", exp: now / 1000 + 1 }), now)).toBe(false);
  });

  it("treats unreadable tokens or a missing exp as expired", () => {
    expect(isExpired("not-a-jwt", now)).toBe(true);
    expect(isExpired("a.%%%.b", now)).toBe(true);
    expect(isExpired(jwt({ sub: "x" }), now)).toBe(true);
    expect(isExpired(jwt({ exp: "soon" }), now)).toBe(true);
  });
});
