// The work-order list's filters, read from and written to the URL's query
// (`?status=OPEN&villaId=...&dueFrom=2026-12-01&page=2`): what the API's list
// route filters on.
import type { operations } from "../../api/schema";
import {
  CATEGORY_LABELS,
  PRIORITY_LABELS,
  SOURCE_LABELS,
  STATUS_LABELS,
  type Priority,
  type WorkOrderCategory,
  type WorkOrderSource,
  type WorkOrderStatus,
} from "./labels";

export type ListQuery = NonNullable<operations["maintenance_work_orders_list"]["parameters"]["query"]>;

export interface Filters {
  status?: WorkOrderStatus;
  villaId?: string;
  category?: WorkOrderCategory;
  source?: WorkOrderSource;
  priority?: Priority;
  /** Due on or after this day, `YYYY-MM-DD` (the company's day; the API reads it so). */
  dueFrom?: string;
  /** Due on or before this day (inclusive). */
  dueTo?: string;
  page: number;
}

/** Rows per page: the API's default page size. */
export const PAGE_SIZE = 20;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function oneOf<K extends string>(labels: Record<K, string>, value: string | null): K | undefined {
  if (!value) return undefined;
  const upper = value.toUpperCase();
  return Object.hasOwn(labels, upper) ? (upper as K) : undefined;
}

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** `value` when it is a calendar day written `YYYY-MM-DD` (what a date input gives). */
function day(value: string | null): string | undefined {
  const m = value ? DAY.exec(value) : null;
  if (!m) return undefined;
  const [year, month, date] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const utc = new Date(Date.UTC(year, month - 1, date));
  return utc.getUTCFullYear() === year && utc.getUTCMonth() === month - 1 && utc.getUTCDate() === date
    ? value!
    : undefined;
}

/**
 * The filters a query string asks for. A value the API would refuse (an
 * unknown status, a malformed villa id, page 0) is left out rather than
 * turned into an error page: the list then shows what it can. A range that
 * ends before it starts is kept: the API says what is wrong with it.
 */
export function parseFilters(params: URLSearchParams): Filters {
  const villaId = params.get("villaId") ?? undefined;
  const page = Number(params.get("page"));
  return {
    status: oneOf(STATUS_LABELS, params.get("status")),
    villaId: villaId && UUID.test(villaId) ? villaId.toLowerCase() : undefined,
    category: oneOf(CATEGORY_LABELS, params.get("category")),
    source: oneOf(SOURCE_LABELS, params.get("source")),
    priority: oneOf(PRIORITY_LABELS, params.get("priority")),
    dueFrom: day(params.get("dueFrom")),
    dueTo: day(params.get("dueTo")),
    page: Number.isInteger(page) && page >= 1 ? page : 1,
  };
}

/** The URL query's values for `filters` (page 1 left out), in a fixed order. */
export function filterQuery(filters: Filters): Record<string, string | number | undefined> {
  return {
    status: filters.status,
    villaId: filters.villaId,
    category: filters.category,
    source: filters.source,
    priority: filters.priority,
    dueFrom: filters.dueFrom,
    dueTo: filters.dueTo,
    page: filters.page > 1 ? filters.page : undefined,
  };
}

/** The API list request's query for `filters`. */
export function apiQuery(filters: Filters): ListQuery {
  const query: ListQuery = { page: filters.page, limit: PAGE_SIZE };
  if (filters.status) query.status = filters.status;
  if (filters.villaId) query.villaId = filters.villaId;
  if (filters.category) query.category = filters.category;
  if (filters.source) query.source = filters.source;
  if (filters.priority) query.priority = filters.priority;
  if (filters.dueFrom) query.dueFrom = filters.dueFrom;
  if (filters.dueTo) query.dueTo = filters.dueTo;
  return query;
}

/** Whether any filter narrows the list (for the "clear filters" control and the empty message). */
export function isFiltered(filters: Filters): boolean {
  return Boolean(
    filters.status ||
      filters.villaId ||
      filters.category ||
      filters.source ||
      filters.priority ||
      filters.dueFrom ||
      filters.dueTo,
  );
}
