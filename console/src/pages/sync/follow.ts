// Following the API's asynchronous work under its rate limits. The sync
// routes allow 5 requests a minute per caller (every reporting route has a
// limit): a 429 carries Retry-After (and `retryAfter` in its body), and the
// console waits that long and asks again. A 429 is a wait, never a failure;
// any other error answer ends the loop with the API's message.
import { unwrap } from "../../api/errors";
import { poll, retryAfterMs } from "../../api/poll";

/** What an openapi-fetch call resolves to. */
export interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * Told when the loop starts a wait the page should explain (`until`, epoch
 * ms): a 429's, or a Retry-After of LONG_WAIT_MS or more (the limiter raises
 * a success's Retry-After when the caller's allowance is spent); and told
 * null when it asks again.
 */
export type OnWait = (until: number | null) => void;

/** A Retry-After this long is the rate limit's, not the work's own pace (2 s). */
export const LONG_WAIT_MS = 5_000;

/** Wait after a 429 without Retry-After (the API's always have one). */
export const LIMITED_FALLBACK_MS = 5_000;

/**
 * Milliseconds poll() waits after `answer`: its Retry-After (the API's 429s
 * always carry one, as their body's `retryAfter` says too), else `fallbackMs`.
 */
export function waitMs(answer: Answer<unknown>, fallbackMs: number, now: number = Date.now()): number {
  return retryAfterMs(answer.response.headers.get("Retry-After"), now) ?? fallbackMs;
}

export function isLimited(answer: Answer<unknown>): boolean {
  return answer.response.status === 429;
}

/**
 * Calls `fn` until its answer is not a 429, waiting as each 429 says (poll.ts
 * reads Retry-After), and returns the data or throws the ApiError of another
 * error answer. For one request: a page load, the sync trigger.
 */
export async function untilAllowed<T>(
  fn: (signal?: AbortSignal) => Promise<Answer<T>>,
  { signal, onWait }: { signal?: AbortSignal; onWait?: OnWait } = {},
): Promise<T> {
  const answer = await poll(
    async (s) => {
      const a = await fn(s);
      onWait?.(isLimited(a) ? Date.now() + waitMs(a, LIMITED_FALLBACK_MS) : null);
      return a;
    },
    { isDone: (a) => !isLimited(a), intervalMs: LIMITED_FALLBACK_MS, signal },
  );
  return unwrap(answer);
}

export interface FollowOptions<T> {
  /** The answer is final: stop following. */
  isFinal: (data: T) => boolean;
  /** Every answer with data, final or not, in order: the page shows it at once. */
  onUpdate: (data: T) => void;
  onWait?: OnWait;
  /** Between answers that carry no Retry-After. */
  intervalMs?: number;
  /** Before the first request: the Retry-After of the answer that started the work. */
  firstAfterMs?: number;
  signal?: AbortSignal;
}

/** Resolves after `ms`, or rejects with the signal's reason once aborted. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Follows work until `isFinal` (COMPLETED, FAILED...): asks again as each
 * answer's Retry-After says, shows every answer, waits out 429s, and throws
 * the ApiError of any other error answer. Resolves with the final data.
 */
export async function follow<T>(
  fn: (signal?: AbortSignal) => Promise<Answer<T>>,
  { isFinal, onUpdate, onWait, intervalMs = 2_000, firstAfterMs = 0, signal }: FollowOptions<T>,
): Promise<T> {
  if (firstAfterMs > 0) {
    if (firstAfterMs >= LONG_WAIT_MS) onWait?.(Date.now() + firstAfterMs);
    await sleep(firstAfterMs, signal);
  }
  const answer = await poll(
    async (s) => {
      const a = await fn(s);
      const wait = waitMs(a, intervalMs);
      const final = !isLimited(a) && (!a.response.ok || a.data === undefined || isFinal(a.data));
      onWait?.(!final && (isLimited(a) || wait >= LONG_WAIT_MS) ? Date.now() + wait : null);
      if (!isLimited(a) && a.response.ok && a.data !== undefined) onUpdate(a.data);
      return a;
    },
    {
      // Done on a final answer or on an error (thrown below), never on a 429.
      isDone: (a) => !isLimited(a) && (!a.response.ok || a.data === undefined || isFinal(a.data)),
      intervalMs,
      signal,
    },
  );
  return unwrap(answer);
}
