// The work-order list (GET /maintenance/work-orders), newest first, with the
// API's filters (status, villa, category, source, priority, due days) and its
// paging, all in the URL's query so a filtered list can be bookmarked and shared.
import { api } from "../api/client";
import { unwrap } from "../api/errors";
import { useApi } from "../api/useApi";
import { formatDate } from "../format";
import { Link } from "../router";
import { useSession } from "../session";
import { pageCount } from "../paging";
import { Page } from "../ui/Page";
import { Pager } from "../ui/Pager";
import { ErrorMessage, Loading } from "../ui/Status";
import { apiQuery, filterQuery, isFiltered, PAGE_SIZE, parseFilters, type Filters } from "./work-orders/filters";
import {
  CATEGORY_LABELS,
  labelOf,
  PRIORITY_LABELS,
  SOURCE_LABELS,
  STATUS_LABELS,
} from "./work-orders/labels";
import { toQuery, useQuery } from "./work-orders/query";
import "./work-orders/work-orders.css";

function Select<K extends string>({
  id,
  label,
  value,
  options,
  onChange,
}: {
  id: string;
  label: string;
  value: string | undefined;
  options: [K, string][];
  onChange: (value: K | undefined) => void;
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value ?? ""} onChange={(e) => onChange(((e.currentTarget as HTMLSelectElement).value || undefined) as K | undefined)}>
        <option value="">Any</option>
        {options.map(([key, text]) => (
          <option key={key} value={key}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
}

/** A day input; empty means no bound. The API reads the day as the company's. */
function DayInput({
  id,
  label,
  value,
  min,
  max,
  onChange,
}: {
  id: string;
  label: string;
  value: string | undefined;
  min?: string;
  max?: string;
  onChange: (value: string | undefined) => void;
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        type="date"
        value={value ?? ""}
        min={min}
        max={max}
        onChange={(e) => onChange((e.currentTarget as HTMLInputElement).value || undefined)}
      />
    </div>
  );
}

const entries = <K extends string>(labels: Record<K, string>) => Object.entries(labels) as [K, string][];

/** The villas to filter by: the newest 100, by name, and the one filtered on if it is older. */
function useVillaOptions(selected: string | undefined) {
  const villas = useApi(
    (signal) => api.GET("/management/villas", { params: { query: { limit: 100 } }, signal }).then(unwrap),
    [],
  );
  const missing = selected && villas.data && !villas.data.data.some((v) => v.id === selected);
  const one = useApi(
    (signal) =>
      missing
        ? api.GET("/management/villas/{id}", { params: { path: { id: selected } }, signal }).then(unwrap)
        : Promise.resolve(undefined),
    [missing ? selected : null],
  );
  const list: [string, string][] = (villas.data?.data ?? []).map((v) => [v.id, v.name]);
  if (missing && one.data) list.push([one.data.id, one.data.name]);
  const byName = new Intl.Collator(undefined, { sensitivity: "base", numeric: true });
  return { options: list.sort((a, b) => byName.compare(a[1], b[1])), error: villas.error };
}

export function WorkOrdersPage() {
  const { config } = useSession();
  const [params, setQuery] = useQuery();
  const filters = parseFilters(params);
  const key = toQuery(filterQuery(filters));
  const list = useApi(
    (signal) => api.GET("/maintenance/work-orders", { params: { query: apiQuery(filters) }, signal }).then(unwrap),
    [key],
  );
  const villas = useVillaOptions(filters.villaId);
  // Any change of filter starts again from the first page.
  const refilter = (change: Partial<Filters>) => setQuery(filterQuery({ ...filters, ...change, page: 1 }));
  const pageLink = (page: number) => `/work-orders${toQuery(filterQuery({ ...filters, page }))}`;

  const total = list.data?.pagination.total ?? 0;
  const size = list.data?.pagination.limit ?? PAGE_SIZE;
  const pages = pageCount(total, size);
  const rows = list.data?.data ?? [];

  return (
    <Page title="Work orders">
      <div class="wo">
        <form class="filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
          <Select id="f-status" label="Status" value={filters.status} options={entries(STATUS_LABELS)}
            onChange={(status) => refilter({ status })} />
          <Select id="f-villa" label="Villa" value={filters.villaId} options={villas.options}
            onChange={(villaId) => refilter({ villaId })} />
          <Select id="f-category" label="Category" value={filters.category} options={entries(CATEGORY_LABELS)}
            onChange={(category) => refilter({ category })} />
          <Select id="f-source" label="Source" value={filters.source} options={entries(SOURCE_LABELS)}
            onChange={(source) => refilter({ source })} />
          <Select id="f-priority" label="Priority" value={filters.priority} options={entries(PRIORITY_LABELS)}
            onChange={(priority) => refilter({ priority })} />
          {/* min and max only guide the date picker: the API judges the range and names what is wrong. */}
          <DayInput id="f-due-from" label="Due from" value={filters.dueFrom} max={filters.dueTo}
            onChange={(dueFrom) => refilter({ dueFrom })} />
          <DayInput id="f-due-to" label="Due to" value={filters.dueTo} min={filters.dueFrom}
            onChange={(dueTo) => refilter({ dueTo })} />
          {isFiltered(filters) && (
            <div class="field">
              <button type="button" onClick={() => setQuery({})}>
                Clear filters
              </button>
            </div>
          )}
        </form>
        <ErrorMessage error={villas.error} />
        <ErrorMessage error={list.error} />
        {list.loading && <Loading label="Loading work orders…" />}
        {/* After a refused request the rows on hand answer other filters: show none. */}
        {list.data && !list.error && (
          <>
            <p class="list-summary" role="status">
              {total === 0
                ? isFiltered(filters)
                  ? "No work orders match these filters."
                  : "No work orders yet."
                : `${total} work order${total === 1 ? "" : "s"}, page ${filters.page} of ${pages}.`}
            </p>
            {rows.length > 0 && (
              <table class="work-orders">
                <caption class="visually-hidden">Work orders, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Work order</th>
                    <th scope="col">Villa</th>
                    <th scope="col">Status</th>
                    <th scope="col">Priority</th>
                    <th scope="col">Category</th>
                    <th scope="col">Source</th>
                    <th scope="col">Due</th>
                    <th scope="col">Assignee</th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((w) => (
                    <tr key={w.id}>
                      <td data-label="Work order">
                        <span>
                          <Link to={`/work-orders/${w.id}`} current={false}>
                            {w.title}
                          </Link>
                          {w.sameDayTurnover && (
                            <>
                              {" "}
                              <span class="flag">Same-day turnover</span>
                            </>
                          )}
                        </span>
                      </td>
                      <td data-label="Villa">{w.villa.name}</td>
                      <td data-label="Status">
                        <span>
                          <span class={`status status-${w.status.toLowerCase()}`}>{labelOf(STATUS_LABELS, w.status)}</span>
                        </span>
                      </td>
                      <td data-label="Priority">{labelOf(PRIORITY_LABELS, w.priority)}</td>
                      <td data-label="Category">{labelOf(CATEGORY_LABELS, w.category)}</td>
                      <td data-label="Source">{labelOf(SOURCE_LABELS, w.source)}</td>
                      <td data-label="Due">{w.dueDate ? formatDate(w.dueDate, config.businessTimeZone) : "—"}</td>
                      <td data-label="Assignee">{w.assignee?.name ?? "Unassigned"}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            <Pager label="Pages" page={filters.page} total={total} size={size} href={pageLink} />
          </>
        )}
      </div>
    </Page>
  );
}
