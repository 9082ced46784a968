// The stock alerts screen's own logic, kept apart from its components so the
// unit tests reach it: grouping by severity, paging, the resolution actions
// and how an alert's figures read.
import type { components, operations } from "../../api/schema";
import { formatDate } from "../../format";

export type Alert = components["schemas"]["Alert"];
export type ResolutionAction = components["schemas"]["AlertResolution"]["action"];
export type Pagination = components["schemas"]["Pagination"];

/** The list's query, as `GET /inventory/alerts` takes it. */
export type AlertQuery = NonNullable<operations["inventory_alerts_list"]["parameters"]["query"]>;
export type AlertType = NonNullable<AlertQuery["type"]>;

export interface SeverityGroup {
  severity: string;
  alerts: Alert[];
}

/** Runs of one severity, in the order given (the API's, by severity). */
export function groupBySeverity(alerts: readonly Alert[]): SeverityGroup[] {
  const groups: SeverityGroup[] = [];
  for (const alert of alerts) {
    const last = groups[groups.length - 1];
    if (last && last.severity === alert.severity) last.alerts.push(alert);
    else groups.push({ severity: alert.severity, alerts: [alert] });
  }
  return groups;
}

/** "CRITICAL" → "Critical", "LOW_STOCK" → "Low stock": the API's codes in words. */
export function humanize(code: string): string {
  const words = code.toLowerCase().replace(/_/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * The actions a person may resolve with, in the API's order, with their
 * words. A Record over the API description's enum: a value added to or
 * removed from it fails the type check until this list follows.
 */
export const RESOLUTION_ACTION_LABELS: Record<ResolutionAction, string> = {
  RESTOCKED: "Restocked",
  REORDERED: "Reordered",
  ADJUSTED: "Stock count adjusted",
  REPLACED: "Replaced",
  DISPOSED: "Disposed of",
  DISMISSED: "Dismissed (nothing to do)",
  OTHER: "Other (say what in the notes)",
};

export const RESOLUTION_ACTIONS = Object.keys(RESOLUTION_ACTION_LABELS) as ResolutionAction[];

export function isResolutionAction(value: string): value is ResolutionAction {
  return Object.hasOwn(RESOLUTION_ACTION_LABELS, value);
}

/** A resolved alert's action in words, AUTO_RESOLVED (the platform's) included. */
export function resolutionLabel(action: string | null | undefined): string {
  if (!action) return "—";
  if (action === "AUTO_RESOLVED") return "Resolved automatically (the cause went away)";
  return isResolutionAction(action) ? RESOLUTION_ACTION_LABELS[action] : humanize(action);
}

/** A quantity as the API gives it (up to 3 decimal places), in the reader's locale. */
export function formatQuantity(value: number, locale?: string): string {
  return new Intl.NumberFormat(locale, { maximumFractionDigits: 3 }).format(value);
}

/**
 * What the alert is about in figures: stock against its minimum for
 * LOW_STOCK, the condition for CONDITION, the expiry day for EXPIRY (a
 * calendar date, read as written: never shifted by a time zone).
 */
export function alertFigure(alert: Alert, locale?: string): { label: string; value: string } {
  if (alert.type === "CONDITION" && alert.condition) {
    return { label: "Condition", value: humanize(alert.condition) };
  }
  if (alert.type === "EXPIRY" && alert.expiryDate) {
    return { label: "Expires", value: formatDate(`${alert.expiryDate}T00:00:00Z`, "UTC", locale) };
  }
  const quantity = formatQuantity(alert.currentQuantity, locale);
  if (alert.threshold != null) {
    return { label: "In stock", value: `${quantity} (minimum ${formatQuantity(alert.threshold, locale)})` };
  }
  return { label: "In stock", value: quantity };
}

export interface PageOf<T> {
  data: T[];
  pagination: Pagination;
}

/**
 * Every record of a paged list, page after page, up to `maxPages`; `total`
 * is the API's count, so `items.length < total` says the list was cut.
 */
export async function allPages<T>(
  fetchPage: (page: number) => Promise<PageOf<T>>,
  maxPages: number,
): Promise<{ items: T[]; total: number }> {
  const items: T[] = [];
  let total = 0;
  for (let page = 1; page <= maxPages; page++) {
    const answer = await fetchPage(page);
    items.push(...answer.data);
    total = answer.pagination.total;
    if (answer.data.length === 0 || items.length >= total || answer.data.length < answer.pagination.limit) break;
  }
  return { items, total };
}

