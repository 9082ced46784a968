// The console's one way to poll the API's asynchronous work (exports, PMS
// sync runs) under its rate limits. The server says when to ask again with
// Retry-After, and that wins over our own interval so we never poll faster
// than it wants. The reporting routes allow a few requests a minute per
// caller: a 429 carries Retry-After (and `retryAfter` in its body), and is a
// wait, never a failure; any other error answer ends with the API's message.
import { unwrap } from "./errors";

export interface PollOptions<T> {
  /** The answer is final (COMPLETED, FAILED...): stop and return it. */
  isDone: (result: T) => boolean;
  /** Wait between attempts when the answer carries no Retry-After. */
  intervalMs: number;
  /**
   * An answer that only says "ask later" (a 429): never done, never passed
   * to `onResult`, so the last progress stays; its Retry-After is waited.
   */
  isWait?: (result: T) => boolean;
  /** Every answer that is not a wait, final or not, in order. */
  onResult?: (result: T) => void;
  /**
   * Before each wait: how long, and the answer that asked for it (undefined
   * for `firstAfterMs`, before the first request).
   */
  onWait?: (ms: number, result: T | undefined) => void;
  /** Before the first request: e.g. the Retry-After of the answer that started the work. */
  firstAfterMs?: number;
  signal?: AbortSignal;
}

/**
 * Milliseconds to wait according to a Retry-After value: delay-seconds or an
 * HTTP date (RFC 9110 §10.2.3). Undefined when absent or unreadable.
 */
export function retryAfterMs(value: string | null | undefined, now: number = Date.now()) {
  if (value == null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
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
 * Calls `fn` until `isDone` accepts its result, waiting Retry-After (when
 * the result's `response` has one) or `intervalMs` in between. Rejects with
 * the signal's reason once aborted; `fn` gets the signal to cancel its fetch.
 */
export async function poll<T extends { response?: Response }>(
  fn: (signal?: AbortSignal) => Promise<T>,
  { isDone, intervalMs, isWait, onResult, onWait, firstAfterMs = 0, signal }: PollOptions<T>,
): Promise<T> {
  if (firstAfterMs > 0) {
    onWait?.(firstAfterMs, undefined);
    await sleep(firstAfterMs, signal);
  }
  for (;;) {
    signal?.throwIfAborted();
    const result = await fn(signal);
    if (!isWait?.(result)) {
      onResult?.(result);
      if (isDone(result)) return result;
    }
    const ms = retryAfterMs(result.response?.headers.get("Retry-After")) ?? intervalMs;
    onWait?.(ms, result);
    await sleep(ms, signal);
  }
}

/** What an openapi-fetch call resolves to. */
export interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * Told when a wait starts that the page should explain (`until`, epoch ms):
 * a 429's, or a Retry-After of LONG_WAIT_MS or more (the limiter raises a
 * success's Retry-After when the caller's allowance is spent); told null
 * before a shorter wait, and when the answer came.
 */
export type OnWait = (until: number | null) => void;

/** A Retry-After this long is the rate limit's, not the work's own pace (2 s). */
export const LONG_WAIT_MS = 5_000;

/** Wait after a 429 without Retry-After (the API's always have one). */
export const LIMITED_FALLBACK_MS = 5_000;

export function isLimited(answer: Answer<unknown>): boolean {
  return answer.response.status === 429;
}

/** poll()'s waits as the page's OnWait: a 429's or a long one explained, the work's own pace not. */
function explainWaits<T>(onWait: OnWait | undefined) {
  return (ms: number, answer: Answer<T> | undefined) =>
    onWait?.((answer && isLimited(answer)) || ms >= LONG_WAIT_MS ? Date.now() + ms : null);
}

/**
 * Calls `fn` until its answer is not a 429, waiting as each 429 says, and
 * returns the data or throws the ApiError of another error answer. For one
 * request: a page load, the sync trigger.
 */
export async function untilAllowed<T>(
  fn: (signal?: AbortSignal) => Promise<Answer<T>>,
  { signal, onWait }: { signal?: AbortSignal; onWait?: OnWait } = {},
): Promise<T> {
  const answer = await poll(fn, {
    isDone: () => true,
    isWait: isLimited,
    intervalMs: LIMITED_FALLBACK_MS,
    onWait: explainWaits(onWait),
    signal,
  });
  onWait?.(null);
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

/**
 * Follows work until `isFinal` (COMPLETED, FAILED...): asks again as each
 * answer's Retry-After says, shows every answer, waits out 429s (the last
 * progress stays), and throws the ApiError of any other error answer.
 * Resolves with the final data.
 */
export async function follow<T>(
  fn: (signal?: AbortSignal) => Promise<Answer<T>>,
  { isFinal, onUpdate, onWait, intervalMs = 2_000, firstAfterMs = 0, signal }: FollowOptions<T>,
): Promise<T> {
  const answer = await poll(fn, {
    // Done on a final answer or on an error (thrown below).
    isDone: (a) => !a.response.ok || a.data === undefined || isFinal(a.data),
    isWait: isLimited,
    onResult: (a) => {
      if (a.response.ok && a.data !== undefined) onUpdate(a.data);
    },
    onWait: explainWaits(onWait),
    intervalMs,
    firstAfterMs,
    signal,
  });
  onWait?.(null);
  return unwrap(answer);
}
