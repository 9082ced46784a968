// The housekeeping board's grid: days across, villas down, from the
// turnovers route's entries (one per villa and day with a checkout or a
// check-in). Pure functions, so the grid is unit-tested without a browser.
import type { components } from "../../api/schema";
import { addDays, daysFrom } from "../../dates";

export type BoardDay = components["schemas"]["BoardDay"];
export type NamedRef = components["schemas"]["NamedRef"];

/** The most days the API's board answers in one request (from and to included). */
export const MAX_DAYS = 62;
/** The days the board shows when no range is asked for: today and the next six. */
export const DEFAULT_DAYS = 7;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Whether `text` is a real calendar date written YYYY-MM-DD. */
export function isDate(text: string | null | undefined): text is string {
  const m = text ? DATE.exec(text) : null;
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.toISOString().slice(0, 10) === text;
}

/** Every date from `from` to `to`, both included. */
export function datesBetween(from: string, to: string): string[] {
  const count = daysFrom(from, to) + 1;
  return Array.from({ length: Math.max(0, count) }, (_, i) => addDays(from, i));
}

export interface Range {
  from: string;
  to: string;
}

/**
 * The range a query string asks for, with the API's defaults: without
 * either, today and the next six days; with one, that day and six more on
 * its side. A malformed date counts as left out. `problem` says why a range
 * cannot be asked for (the API would answer 400 on `to`).
 */
export function parseRange(params: URLSearchParams, today: string): Range & { problem?: string } {
  const from = params.get("from");
  const to = params.get("to");
  const range: Range =
    isDate(from) && isDate(to)
      ? { from, to }
      : isDate(from)
        ? { from, to: addDays(from, DEFAULT_DAYS - 1) }
        : isDate(to)
          ? { from: addDays(to, -(DEFAULT_DAYS - 1)), to }
          : { from: today, to: addDays(today, DEFAULT_DAYS - 1) };
  return { ...range, problem: rangeProblem(range) };
}

/** Why the API would refuse this range, or undefined when it is fine. */
export function rangeProblem({ from, to }: Range): string | undefined {
  const span = daysFrom(from, to);
  if (span < 0) return "The last day is before the first day.";
  if (span + 1 > MAX_DAYS) return `The board shows at most ${MAX_DAYS} days at a time.`;
  return undefined;
}

/** The same number of days just before (`-1`) or just after (`1`) the range. */
export function shiftRange({ from, to }: Range, direction: -1 | 1): Range {
  const length = daysFrom(from, to) + 1;
  return { from: addDays(from, direction * length), to: addDays(to, direction * length) };
}

export interface BoardRow {
  villa: NamedRef;
  /** One per date of the range: the villa's entry for that day, or null. */
  cells: (BoardDay | null)[];
}

export interface BoardGrid {
  dates: string[];
  rows: BoardRow[];
  /** Entries with a same-day turnover (for the summary line). */
  sameDayTurnovers: number;
  /** Work orders on the board. */
  workOrders: number;
}

/**
 * The grid of the range: one column per date (days without any entry too),
 * one row per villa that has an entry, villas by name (then id, for two
 * villas of one name). Entries outside the range are left out.
 */
export function buildBoard(entries: BoardDay[], range: Range, locale?: string): BoardGrid {
  const dates = datesBetween(range.from, range.to);
  const column = new Map(dates.map((date, i) => [date, i]));
  const rows = new Map<string, BoardRow>();
  let sameDayTurnovers = 0;
  let workOrders = 0;
  for (const entry of entries) {
    const i = column.get(entry.date);
    if (i === undefined) continue;
    let row = rows.get(entry.villa.id);
    if (!row) {
      row = { villa: entry.villa, cells: dates.map(() => null) };
      rows.set(entry.villa.id, row);
    }
    row.cells[i] = entry;
    if (entry.sameDayTurnover) sameDayTurnovers++;
    workOrders += entry.workOrders.length;
  }
  const collator = new Intl.Collator(locale, { sensitivity: "base", numeric: true });
  const sorted = [...rows.values()].sort(
    (a, b) => collator.compare(a.villa.name, b.villa.name) || a.villa.id.localeCompare(b.villa.id),
  );
  return { dates, rows: sorted, sameDayTurnovers, workOrders };
}
