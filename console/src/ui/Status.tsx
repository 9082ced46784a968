// How every screen says "loading" and "failed": one look, announced to
// screen readers (status and alert roles).
import { errorText } from "../api/errors";

export function Loading({ label = "Loading…" }: { label?: string }) {
  return (
    <p role="status" class="loading">
      {label}
    </p>
  );
}

export function ErrorMessage({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  return (
    <p role="alert" class="error">
      {errorText(error)}
    </p>
  );
}

/** Progress of long work: a native progress bar with its figure in words. */
export function Progress({ value, max = 100, label }: { value: number; max?: number; label: string }) {
  const percent = max > 0 ? Math.round((value / max) * 100) : 0;
  return (
    <span class="progress">
      <progress value={value} max={max} aria-label={label}>
        {percent}%
      </progress>
      <span aria-hidden="true">{percent}%</span>
    </span>
  );
}
