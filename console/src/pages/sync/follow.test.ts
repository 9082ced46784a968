import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../../api/errors";
import { follow, untilAllowed, type Answer } from "./follow";

type Run = { status: string; pages: number };

function ok<T>(data: T, headers: Record<string, string> = {}): Answer<T> {
  return { data, response: new Response(null, { status: 200, headers }) };
}

/** A 429 as the reporting surface answers it. */
function limited(seconds: number | null): Answer<never> {
  const headers: Record<string, string> = seconds === null ? {} : { "Retry-After": String(seconds) };
  return {
    error: { error: { code: "RATE_LIMIT_EXCEEDED", message: "too many requests", retryAfter: seconds } },
    response: new Response(null, { status: 429, headers }),
  };
}

function failed(status: number, message: string): Answer<never> {
  return { error: { error: { code: "X", message, retryAfter: null } }, response: new Response(null, { status }) };
}

const NOW = Date.UTC(2030, 0, 1, 12, 0, 0);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(NOW);
});
afterEach(() => vi.useRealTimers());

describe("untilAllowed", () => {
  it("waits out each 429 as its Retry-After says, telling when it asks again", async () => {
    const fn = vi
      .fn<() => Promise<Answer<string>>>()
      .mockResolvedValueOnce(limited(30))
      .mockResolvedValueOnce(limited(5))
      .mockResolvedValueOnce(ok("runs"));
    const onWait = vi.fn();
    const done = untilAllowed(fn, { onWait });
    await vi.advanceTimersByTimeAsync(0);
    expect(onWait).toHaveBeenLastCalledWith(NOW + 30_000);
    await vi.advanceTimersByTimeAsync(29_999);
    expect(fn).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(fn).toHaveBeenCalledTimes(2);
    expect(onWait).toHaveBeenLastCalledWith(NOW + 30_000 + 5_000);
    await vi.advanceTimersByTimeAsync(5_000);
    await expect(done).resolves.toBe("runs");
    expect(onWait).toHaveBeenLastCalledWith(null);
  });

  it("throws the API's message of any other error, at once", async () => {
    const fn = vi.fn(async () => failed(503, "PMS credentials are not set"));
    const done = untilAllowed(fn);
    await expect(done).rejects.toEqual(new ApiError("PMS credentials are not set", 503));
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it("stops waiting when aborted", async () => {
    const fn = vi.fn(async () => limited(60));
    const controller = new AbortController();
    const done = untilAllowed(fn, { signal: controller.signal });
    const rejected = expect(done).rejects.toThrow("left");
    await vi.advanceTimersByTimeAsync(1_000);
    controller.abort(new Error("left"));
    await rejected;
    await vi.advanceTimersByTimeAsync(120_000);
    expect(fn).toHaveBeenCalledTimes(1);
  });
});

describe("follow", () => {
  const isFinal = (r: Run) => r.status === "COMPLETED" || r.status === "FAILED";

  it("shows every answer and asks again as Retry-After says until the run is final", async () => {
    const fn = vi
      .fn<() => Promise<Answer<Run>>>()
      .mockResolvedValueOnce(ok({ status: "RUNNING", pages: 1 }, { "Retry-After": "2" }))
      .mockResolvedValueOnce(ok({ status: "RUNNING", pages: 5 }, { "Retry-After": "7" }))
      .mockResolvedValueOnce(ok({ status: "COMPLETED", pages: 12 }));
    const onUpdate = vi.fn();
    const done = follow(fn, { isFinal, onUpdate });
    await vi.advanceTimersByTimeAsync(2_000);
    expect(fn).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(6_999);
    expect(fn).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(1);
    await expect(done).resolves.toEqual({ status: "COMPLETED", pages: 12 });
    expect(onUpdate.mock.calls.map(([r]) => r.pages)).toEqual([1, 5, 12]);
  });

  it("treats a 429 as a wait: the last progress stays, and following goes on", async () => {
    const fn = vi
      .fn<() => Promise<Answer<Run>>>()
      .mockResolvedValueOnce(ok({ status: "RUNNING", pages: 3 }, { "Retry-After": "2" }))
      .mockResolvedValueOnce(limited(41))
      .mockResolvedValueOnce(ok({ status: "FAILED", pages: 4 }));
    const onUpdate = vi.fn();
    const onWait = vi.fn();
    const done = follow(fn, { isFinal, onUpdate, onWait });
    await vi.advanceTimersByTimeAsync(2_000);
    expect(onWait).toHaveBeenLastCalledWith(NOW + 2_000 + 41_000);
    // Waiting: nothing new to show, the run's last progress stays on screen.
    expect(onUpdate).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(40_999);
    expect(fn).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(1);
    await expect(done).resolves.toEqual({ status: "FAILED", pages: 4 });
    expect(onWait).toHaveBeenLastCalledWith(null);
    expect(onUpdate).toHaveBeenLastCalledWith({ status: "FAILED", pages: 4 });
  });

  it("waits its interval after a 429 without Retry-After", async () => {
    const fn = vi
      .fn<() => Promise<Answer<Run>>>()
      .mockResolvedValueOnce(limited(null))
      .mockResolvedValueOnce(ok({ status: "COMPLETED", pages: 1 }));
    const onWait = vi.fn();
    const done = follow(fn, { isFinal, onUpdate: () => {}, onWait, intervalMs: 3_000 });
    await vi.advanceTimersByTimeAsync(0);
    expect(onWait).toHaveBeenLastCalledWith(NOW + 3_000);
    await vi.advanceTimersByTimeAsync(3_000);
    await expect(done).resolves.toEqual({ status: "COMPLETED", pages: 1 });
  });

  it("asks first after the trigger's Retry-After", async () => {
    const fn = vi.fn(async () => ok({ status: "COMPLETED", pages: 1 }));
    const onWait = vi.fn();
    const done = follow(fn, { isFinal, onUpdate: () => {}, onWait, firstAfterMs: 2_000 });
    await vi.advanceTimersByTimeAsync(1_999);
    expect(fn).not.toHaveBeenCalled();
    // The work's own pace: nothing to explain.
    expect(onWait).not.toHaveBeenCalledWith(expect.any(Number));
    await vi.advanceTimersByTimeAsync(1);
    await expect(done).resolves.toEqual({ status: "COMPLETED", pages: 1 });
  });

  it("explains a long Retry-After (the limiter's) as a wait, before the first request too", async () => {
    const fn = vi
      .fn<() => Promise<Answer<Run>>>()
      .mockResolvedValueOnce(ok({ status: "RUNNING", pages: 2 }, { "Retry-After": "2" }))
      .mockResolvedValueOnce(ok({ status: "RUNNING", pages: 4 }, { "Retry-After": "38" }))
      .mockResolvedValueOnce(ok({ status: "COMPLETED", pages: 9 }));
    const onWait = vi.fn();
    const done = follow(fn, { isFinal, onUpdate: () => {}, onWait, firstAfterMs: 20_000 });
    expect(onWait).toHaveBeenLastCalledWith(NOW + 20_000);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(onWait).toHaveBeenLastCalledWith(null);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(onWait).toHaveBeenLastCalledWith(NOW + 22_000 + 38_000);
    await vi.advanceTimersByTimeAsync(38_000);
    await expect(done).resolves.toEqual({ status: "COMPLETED", pages: 9 });
    expect(onWait).toHaveBeenLastCalledWith(null);
  });

  it("ends with the API's message on another error", async () => {
    const fn = vi
      .fn<() => Promise<Answer<Run>>>()
      .mockResolvedValueOnce(ok({ status: "RUNNING", pages: 1 }, { "Retry-After": "2" }))
      .mockResolvedValueOnce(failed(404, "sync run not found"));
    const done = follow(fn, { isFinal, onUpdate: () => {} });
    const rejected = expect(done).rejects.toEqual(new ApiError("sync run not found", 404));
    await vi.advanceTimersByTimeAsync(2_000);
    await rejected;
    expect(fn).toHaveBeenCalledTimes(2);
  });
});
