// What the dashboard shows, read from and written to the URL's query, so that
// a view can be shared: ?startDate=&endDate=&listingId=&currency=&chart=&granularity=
// Parameters left out take the API's defaults (the 30 nights ending today,
// every active listing, the reporting currency); the chart's defaults
// (revenue, daily) are left out of the URL too.
import { addDays, daysFrom } from "../../dates";

export type ChartType = "revenue" | "occupancy";
export type Granularity = "daily" | "weekly" | "monthly";

export const CHART_TYPES: readonly ChartType[] = ["revenue", "occupancy"];
export const GRANULARITIES: readonly Granularity[] = ["daily", "weekly", "monthly"];

export interface View {
  /** First night of the period, YYYY-MM-DD; null: the API's default. */
  startDate: string | null;
  /** Last night of the period (included), YYYY-MM-DD; null: today. */
  endDate: string | null;
  /** One listing (our id); null: every active listing. */
  listingId: string | null;
  /** ISO 4217 code of the money figures; null: the API's reporting currency. */
  currency: string | null;
  chart: ChartType;
  granularity: Granularity;
}

export const DEFAULT_VIEW: View = {
  startDate: null,
  endDate: null,
  listingId: null,
  currency: null,
  chart: "revenue",
  granularity: "daily",
};

/** The longest period the dashboard's figures accept (the API's limit). */
export const MAX_NIGHTS = 366;

/** A real calendar day written YYYY-MM-DD, or null. */
export function parseDay(value: string | null | undefined): string | null {
  if (!value || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return null;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value ? value : null;
}

function oneOf<T extends string>(value: string | null, allowed: readonly T[], fallback: T): T {
  return allowed.includes(value as T) ? (value as T) : fallback;
}

/** The view a query string asks for; what it cannot read is left at its default. */
export function parseView(search: string): View {
  const q = new URLSearchParams(search);
  const listingId = q.get("listingId")?.trim() ?? "";
  const currency = q.get("currency")?.trim() ?? "";
  return {
    startDate: parseDay(q.get("startDate")),
    endDate: parseDay(q.get("endDate")),
    listingId: /^[0-9A-Za-z-]{1,64}$/.test(listingId) ? listingId : null,
    currency: /^[A-Za-z]{3}$/.test(currency) ? currency.toUpperCase() : null,
    chart: oneOf(q.get("chart"), CHART_TYPES, DEFAULT_VIEW.chart),
    granularity: oneOf(q.get("granularity"), GRANULARITIES, DEFAULT_VIEW.granularity),
  };
}

/** The query string ("?..." or "") of a view, defaults left out, in a fixed order. */
export function viewToSearch(view: View): string {
  const q = new URLSearchParams();
  if (view.startDate) q.set("startDate", view.startDate);
  if (view.endDate) q.set("endDate", view.endDate);
  if (view.listingId) q.set("listingId", view.listingId);
  if (view.currency) q.set("currency", view.currency);
  if (view.chart !== DEFAULT_VIEW.chart) q.set("chart", view.chart);
  if (view.granularity !== DEFAULT_VIEW.granularity) q.set("granularity", view.granularity);
  const text = q.toString();
  return text ? `?${text}` : "";
}

/** The period and scope parameters of the dashboard's routes for a view. */
export function scopeQuery(view: View): { startDate?: string; endDate?: string; listingIds?: string } {
  return {
    ...(view.startDate ? { startDate: view.startDate } : {}),
    ...(view.endDate ? { endDate: view.endDate } : {}),
    ...(view.listingId ? { listingIds: view.listingId } : {}),
  };
}

/** ...and the money figures' currency, for the routes that take one. */
export function moneyQuery(view: View): { startDate?: string; endDate?: string; listingIds?: string; currency?: string } {
  return { ...scopeQuery(view), ...(view.currency ? { currency: view.currency } : {}) };
}

/** Nights from `start` to `end`, both included (0 when `end` is before `start`). */
export function nightsBetween(start: string, end: string): number {
  return Math.max(0, daysFrom(start, end) + 1);
}

/** The `nights` nights ending on `today` (included), as the API's default period is. */
export function lastNights(nights: number, today: string): { startDate: string; endDate: string } {
  return { startDate: addDays(today, -(nights - 1)), endDate: today };
}

/** Why a period cannot be asked for, in words; null when it can. */
export function periodProblem(startDate: string, endDate: string): string | null {
  if (!parseDay(startDate)) return "Enter the first night as a date.";
  if (!parseDay(endDate)) return "Enter the last night as a date.";
  if (startDate > endDate) return "The first night must not be after the last.";
  if (nightsBetween(startDate, endDate) > MAX_NIGHTS) return `A period is at most ${MAX_NIGHTS} nights.`;
  return null;
}
