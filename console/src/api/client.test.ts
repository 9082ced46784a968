import { beforeEach, describe, expect, it, vi } from "vitest";

// Node has no sessionStorage; a Map stands in for it.
const store = new Map<string, string>();
vi.stubGlobal("sessionStorage", {
  getItem: (k: string) => store.get(k) ?? null,
  setItem: (k: string, v: string) => void store.set(k, v),
  removeItem: (k: string) => void store.delete(k),
});

const { createApiClient, onUnauthorized } = await import("./client");
const { getToken, setToken } = await import("../auth/token");

describe("api client", () => {
  beforeEach(() => store.clear());

  it("sends the bearer token", async () => {
    setToken("abc");
    const fetch = vi.spyOn(globalThis, "fetch").mockResolvedValue(Response.json({ status: "ok" }));
    await createApiClient("http://villa.test").GET("/healthz");
    const request = fetch.mock.calls[0]![0] as Request;
    expect(request.headers.get("Authorization")).toBe("Bearer abc");
    fetch.mockRestore();
  });

  it("on 401 clears the token and tells the listeners", async () => {
    setToken("abc");
    const listener = vi.fn();
    const off = onUnauthorized(listener);
    const fetch = vi
      .spyOn(globalThis, "fetch")
      .mockResolvedValue(Response.json({ error: "UNAUTHORIZED" }, { status: 401 }));
    await createApiClient("http://villa.test").GET("/healthz");
    expect(getToken()).toBeNull();
    expect(listener).toHaveBeenCalledOnce();
    off();
    fetch.mockRestore();
  });
});
