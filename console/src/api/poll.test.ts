import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "./errors";
import { follow, poll, retryAfterMs, untilAllowed, type Answer } from "./poll";

type Progress = { status: string; response: Response };

function progress(status: string, headers: Record<string, string> = {}, httpStatus = 200): Progress {
  return { status, response: new Response(null, { status: httpStatus, headers }) };
}

const NOW = Date.UTC(2030, 0, 1, 12, 0, 0);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(NOW);
});
afterEach(() => vi.useRealTimers());

describe("retryAfterMs", () => {
  it("reads delay-seconds and HTTP dates", () => {
    expect(retryAfterMs("5", NOW)).toBe(5000);
    expect(retryAfterMs("Tue, 01 Jan 2030 12:00:07 GMT", NOW)).toBe(7000);
    expect(retryAfterMs("Tue, 01 Jan 2030 11:00:00 GMT", NOW)).toBe(0);
    expect(retryAfterMs(null, NOW)).toBeUndefined();
    expect(retryAfterMs("soon", NOW)).toBeUndefined();
  });
});

describe("poll", () => {
  const isDone = (a: Progress) => a.status !== "PROCESSING";

  it("waits Retry-After seconds rather than its interval", async () => {
    const fn = vi
      .fn<() => Promise<Progress>>()
      .mockResolvedValueOnce(progress("PROCESSING", { "Retry-After": "3" }))
      .mockResolvedValueOnce(progress("COMPLETED"));
    const done = poll(fn, { isDone, intervalMs: 1000 });
    await vi.advanceTimersByTimeAsync(2999);
    expect(fn).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect((await done).status).toBe("COMPLETED");
    expect(fn).toHaveBeenCalledTimes(2);
  });

  it("waits until a Retry-After HTTP date", async () => {
    const fn = vi
      .fn<() => Promise<Progress>>()
      .mockResolvedValueOnce(progress("PROCESSING", { "Retry-After": "Tue, 01 Jan 2030 12:00:10 GMT" }))
      .mockResolvedValueOnce(progress("FAILED"));
    const done = poll(fn, { isDone, intervalMs: 1000 });
    await vi.advanceTimersByTimeAsync(9999);
    expect(fn).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect((await done).status).toBe("FAILED");
  });

  it("falls back to its interval without Retry-After", async () => {
    const fn = vi
      .fn<() => Promise<Progress>>()
      .mockResolvedValueOnce(progress("PROCESSING"))
      .mockResolvedValueOnce(progress("COMPLETED"));
    const done = poll(fn, { isDone, intervalMs: 500 });
    await vi.advanceTimersByTimeAsync(500);
    expect((await done).status).toBe("COMPLETED");
  });

  it("stops when aborted, while waiting or before starting", async () => {
    const fn = vi.fn(async () => progress("PROCESSING", { "Retry-After": "60" }));
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
  it("waits out a wait answer without taking it as progress, and tells every wait", async () => {
    const fn = vi
      .fn<() => Promise<Progress>>()
      .mockResolvedValueOnce(progress("PROCESSING", { "Retry-After": "2" }))
      .mockResolvedValueOnce(progress("LIMITED", { "Retry-After": "30" }, 429))
      .mockResolvedValueOnce(progress("COMPLETED"));
    const onResult = vi.fn();
    const onWait = vi.fn();
    const done = poll(fn, {
      isDone,
      isWait: (a) => a.response.status === 429,
      intervalMs: 1000,
      onResult,
      onWait,
      firstAfterMs: 500,
    });
    expect(onWait).toHaveBeenLastCalledWith(500, undefined);
    await vi.advanceTimersByTimeAsync(500);
    expect(fn).toHaveBeenCalledTimes(1);
    expect(onWait).toHaveBeenLastCalledWith(2000, expect.objectContaining({ status: "PROCESSING" }));
    await vi.advanceTimersByTimeAsync(2000);
    expect(onWait).toHaveBeenLastCalledWith(30_000, expect.objectContaining({ status: "LIMITED" }));
    await vi.advanceTimersByTimeAsync(29_999);
    expect(fn).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(1);
    expect((await done).status).toBe("COMPLETED");
    // The 429 never reached onResult: the last progress stayed.
    expect(onResult.mock.calls.map(([a]) => a.status)).toEqual(["PROCESSING", "COMPLETED"]);
    expect(onWait).toHaveBeenCalledTimes(3);
  });
});

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
