import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { poll, retryAfterMs } from "./poll";

type Answer = { status: string; response: Response };

function answer(status: string, headers: Record<string, string> = {}): Answer {
  return { status, response: new Response(null, { status: 200, headers }) };
}

describe("retryAfterMs", () => {
  const now = Date.UTC(2030, 0, 1, 12, 0, 0);
  it("reads delay-seconds and HTTP dates", () => {
    expect(retryAfterMs("5", now)).toBe(5000);
    expect(retryAfterMs("Tue, 01 Jan 2030 12:00:07 GMT", now)).toBe(7000);
    expect(retryAfterMs("Tue, 01 Jan 2030 11:00:00 GMT", now)).toBe(0);
    expect(retryAfterMs(null, now)).toBeUndefined();
    expect(retryAfterMs("soon", now)).toBeUndefined();
  });
});

describe("poll", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(Date.UTC(2030, 0, 1, 12, 0, 0));
  });
  afterEach(() => vi.useRealTimers());

  const isDone = (a: Answer) => a.status !== "PROCESSING";

  it("waits Retry-After seconds rather than its interval", async () => {
    const fn = vi
      .fn<() => Promise<Answer>>()
      .mockResolvedValueOnce(answer("PROCESSING", { "Retry-After": "3" }))
      .mockResolvedValueOnce(answer("COMPLETED"));
    const done = poll(fn, { isDone, intervalMs: 1000 });
    await vi.advanceTimersByTimeAsync(2999);
    expect(fn).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect((await done).status).toBe("COMPLETED");
    expect(fn).toHaveBeenCalledTimes(2);
  });

  it("waits until a Retry-After HTTP date", async () => {
    const fn = vi
      .fn<() => Promise<Answer>>()
      .mockResolvedValueOnce(answer("PROCESSING", { "Retry-After": "Tue, 01 Jan 2030 12:00:10 GMT" }))
      .mockResolvedValueOnce(answer("FAILED"));
    const done = poll(fn, { isDone, intervalMs: 1000 });
    await vi.advanceTimersByTimeAsync(9999);
    expect(fn).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect((await done).status).toBe("FAILED");
  });

  it("falls back to its interval without Retry-After", async () => {
    const fn = vi
      .fn<() => Promise<Answer>>()
      .mockResolvedValueOnce(answer("PROCESSING"))
      .mockResolvedValueOnce(answer("COMPLETED"));
    const done = poll(fn, { isDone, intervalMs: 500 });
    await vi.advanceTimersByTimeAsync(500);
    expect((await done).status).toBe("COMPLETED");
  });

  it("stops when aborted, while waiting or before starting", async () => {
    const fn = vi.fn(async () => answer("PROCESSING", { "Retry-After": "60" }));
    const controller = new AbortController();
    const done = poll(fn, { isDone, intervalMs: 1000, signal: controller.signal });
    const rejected = expect(done).rejects.toThrow("left the page");
    await vi.advanceTimersByTimeAsync(1000);
    controller.abort(new Error("left the page"));
    await rejected;
    await vi.advanceTimersByTimeAsync(120_000);
    expect(fn).toHaveBeenCalledTimes(1);

    const again = poll(fn, { isDone, intervalMs: 1000, signal: controller.signal });
    await expect(again).rejects.toThrow("left the page");
    expect(fn).toHaveBeenCalledTimes(1);
  });
});
