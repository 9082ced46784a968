// A sync run as the screen shows it: whether it has finished, and how far
// each entity has got.
import type { components } from "../../api/schema";

export type SyncRun = components["schemas"]["ReportingSyncRun"];
export type SyncEntity = SyncRun["entities"][number];
export type EntityProgress = NonNullable<SyncRun["progress"][SyncEntity]>;
export type SyncStatus = SyncRun["status"];

export const ENTITY_LABELS: Record<SyncEntity, string> = {
  listings: "Listings",
  reservations: "Reservations",
};

export function isFinal(status: SyncStatus): boolean {
  return status === "COMPLETED" || status === "FAILED";
}

/**
 * Percent of an entity's pages done: 100 once the run COMPLETED, 0 before its
 * synchronisation began, undefined while the PMS has not told how many pages
 * there are (an indeterminate bar).
 */
export function entityPercent(run: Pick<SyncRun, "status" | "progress">, entity: SyncEntity): number | undefined {
  if (run.status === "COMPLETED") return 100;
  const p = run.progress[entity];
  if (!p) return 0;
  const done = p.pagesDone ?? 0;
  if (p.pagesTotal == null || p.pagesTotal <= 0) return undefined;
  return Math.min(100, Math.round((done / p.pagesTotal) * 100));
}

/** The counts of an entity's progress, in words ("12 of 12 pages, 1,200 fetched: 3 created, ..."). */
export function entitySummary(p: EntityProgress | undefined, format: (n: number) => string = String): string {
  if (!p) return "not started";
  const pages =
    p.pagesTotal != null ? `${format(p.pagesDone ?? 0)} of ${format(p.pagesTotal)} pages` : `${format(p.pagesDone ?? 0)} pages`;
  const counts = (
    [
      ["created", p.created],
      ["updated", p.updated],
      ["unchanged", p.unchanged],
      ["skipped", p.skipped],
      ["retired", p.retired],
    ] as const
  )
    .filter(([, n]) => (n ?? 0) > 0)
    .map(([what, n]) => `${format(n!)} ${what}`);
  const fetched = `${format(p.fetched ?? 0)} fetched`;
  return counts.length ? `${pages}, ${fetched}: ${counts.join(", ")}` : `${pages}, ${fetched}`;
}

/** The runs with `run` in its place (replacing the one of the same id), newest first. */
export function mergeRun<T extends { syncId: string; startedAt: string }>(runs: T[], run: T): T[] {
  const rest = runs.filter((r) => r.syncId !== run.syncId);
  return [run, ...rest].sort((a, b) => Date.parse(b.startedAt) - Date.parse(a.startedAt));
}
