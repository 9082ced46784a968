// Pieces both asynchronous-work screens (PMS sync, exports) show: a status
// badge, a progress bar that may be indeterminate, and the note that the
// console is waiting for the API's rate limit.
import { formatDateTime } from "../../format";
import "./work.css";

/** A status as the API words it (COMPLETED, FAILED...), coloured by its class. */
export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status.toLowerCase()}`}>{status}</span>;
}

/**
 * A native progress bar named `label`, with its percent in words beside it;
 * `percent` undefined is an indeterminate bar ("in progress").
 */
export function Bar({ percent, label }: { percent: number | undefined; label: string }) {
  return (
    <span class="bar">
      {percent === undefined ? (
        <progress aria-label={label} />
      ) : (
        <progress aria-label={label} value={percent} max={100}>
          {percent}%
        </progress>
      )}
      <span aria-hidden="true">{percent === undefined ? "…" : `${percent}%`}</span>
    </span>
  );
}

/**
 * "Waiting for the rate limit": the API refused a request with 429, or told
 * to come back later than the work's pace, and the console asks again at
 * `until` (epoch ms), keeping what it showed.
 */
export function RateLimitWait({ until, timeZone, what }: { until: number | null; timeZone: string; what: string }) {
  if (until === null) return null;
  const seconds = Math.max(0, Math.ceil((until - Date.now()) / 1000));
  return (
    <p class="wait">
      Waiting for the API's rate limit: {what} again in {seconds} s (at{" "}
      <time dateTime={new Date(until).toISOString()}>{formatTime(until, timeZone)}</time>).
    </p>
  );
}

function formatTime(value: number, timeZone: string): string {
  try {
    return new Intl.DateTimeFormat(undefined, { timeStyle: "medium", timeZone }).format(new Date(value));
  } catch {
    return formatDateTime(value, timeZone);
  }
}

const numbers = new Intl.NumberFormat();

export function formatCount(n: number): string {
  return numbers.format(n);
}
