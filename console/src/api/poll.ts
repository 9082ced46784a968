// Polling for the API's asynchronous work (exports, PMS sync runs): the
// server says when to ask again with Retry-After, and that wins over our
// own interval so we never poll faster than it wants.

export interface PollOptions<T> {
  /** The answer is final (COMPLETED, FAILED...): stop and return it. */
  isDone: (result: T) => boolean;
  /** Wait between attempts when the answer carries no Retry-After. */
  intervalMs: number;
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

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
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
  { isDone, intervalMs, signal }: PollOptions<T>,
): Promise<T> {
  for (;;) {
    signal?.throwIfAborted();
    const result = await fn(signal);
    if (isDone(result)) return result;
    const wait = retryAfterMs(result.response?.headers.get("Retry-After"));
    await sleep(wait ?? intervalMs, signal);
  }
}
