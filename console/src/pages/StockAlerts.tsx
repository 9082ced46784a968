// Stock alerts (issue 30): the open alerts by severity, most severe first;
// acknowledge; resolve with the action taken. The alerts are raised by
// worker-alerts (docs/api/inventory.md); people only acknowledge and resolve.
//
// Both views page as the API does: the open view asks for `status=OPEN`
// (ACTIVE and ACKNOWLEDGED) `sort=SEVERITY` and groups each page under its
// severities' headings (a severity may go on over the next page).
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../api/client";
import { unwrap } from "../api/errors";
import { useApi } from "../api/useApi";
import { pageCount } from "../paging";
import { useSession } from "../session";
import { ErrorMessage, Loading } from "../ui/Status";
import { Page } from "../ui/Page";
import { Pager } from "../ui/Pager";
import { AlertCard, type AlertPermissions } from "./stock-alerts/AlertCard";
import {
  allPages,
  groupBySeverity,
  humanize,
  type Alert,
  type AlertQuery,
  type AlertType,
} from "./stock-alerts/alerts";
import "./stock-alerts/stock-alerts.css";

/** Alerts shown per page. */
const PAGE_SIZE = 20;
/** The API's largest page, and how many of them the property filter reads. */
const FETCH_LIMIT = 100;
const FETCH_MAX_PAGES = 10;

const TYPES: AlertType[] = ["LOW_STOCK", "CONDITION", "EXPIRY"];

type View = "open" | "resolved";

interface Filters {
  view: View;
  type: AlertType | "";
  propertyId: string;
}

/** One page of alerts: the open ones most severe first, the resolved ones newest first. */
function listAlerts(filters: Filters, page: number, signal: AbortSignal) {
  const query: AlertQuery =
    filters.view === "open" ? { status: "OPEN", sort: "SEVERITY" } : { status: "RESOLVED", sort: "NEWEST" };
  return api
    .GET("/inventory/alerts", {
      params: {
        query: {
          ...query,
          page,
          limit: PAGE_SIZE,
          type: filters.type || undefined,
          propertyId: filters.propertyId || undefined,
        },
      },
      signal,
    })
    .then(unwrap);
}

/**
 * The page of alerts asked for; when it came back empty although there are
 * alerts (the last ones of the last page were resolved), the last page there is.
 */
function usePageOfAlerts(filters: Filters, round: number) {
  const [page, setPage] = useState(1);
  const list = useApi((signal) => listAlerts(filters, page, signal), [page, round]);
  const pagination = list.data?.pagination;
  useEffect(() => {
    if (pagination && list.data?.data.length === 0 && pagination.total > 0 && pagination.page > 1) {
      setPage(pageCount(pagination.total, pagination.limit));
    }
  }, [pagination]);
  return { list, setPage };
}

function useProperties() {
  return useApi(
    (signal) =>
      allPages(
        (page) =>
          api.GET("/inventory/properties", { params: { query: { page, limit: FETCH_LIMIT } }, signal }).then(unwrap),
        FETCH_MAX_PAGES,
      ).then((all) => all.items),
    [],
  );
}

function FilterBar(props: { filters: Filters; onChange: (filters: Filters) => void }) {
  const { filters, onChange } = props;
  const properties = useProperties();
  return (
    <form class="sa-filters" aria-label="Filter the alerts" onSubmit={(event) => event.preventDefault()}>
      <div>
        <label for="sa-view">Show</label>
        <select
          id="sa-view"
          value={filters.view}
          onChange={(event) => onChange({ ...filters, view: event.currentTarget.value as View })}
        >
          <option value="open">Open alerts</option>
          <option value="resolved">Resolved alerts</option>
        </select>
      </div>
      <div>
        <label for="sa-type">Type</label>
        <select
          id="sa-type"
          value={filters.type}
          onChange={(event) => onChange({ ...filters, type: event.currentTarget.value as AlertType | "" })}
        >
          <option value="">All types</option>
          {TYPES.map((type) => (
            <option key={type} value={type}>
              {humanize(type)}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label for="sa-property">Property</label>
        <select
          id="sa-property"
          value={filters.propertyId}
          aria-busy={properties.loading}
          onChange={(event) => onChange({ ...filters, propertyId: event.currentTarget.value })}
        >
          <option value="">All properties</option>
          {properties.data?.map((property) => (
            <option key={property.id} value={property.id}>
              {property.name}
            </option>
          ))}
        </select>
        {properties.loading && <Loading label="Loading the properties…" />}
        <ErrorMessage error={properties.error} />
      </div>
    </form>
  );
}

function AlertList(props: {
  alerts: Alert[];
  headingLevel: 3 | 4;
  timeZone: string;
  allowed: AlertPermissions;
  onChanged: (message: string) => void;
}) {
  const { alerts, ...card } = props;
  return (
    <ul class="sa-list">
      {alerts.map((alert) => (
        <AlertCard key={alert.id} alert={alert} {...card} />
      ))}
    </ul>
  );
}

function OpenAlerts(props: {
  filters: Filters;
  timeZone: string;
  allowed: AlertPermissions;
  onChanged: (message: string) => void;
  /** Changes after each change the API accepted, and on Refresh: load again. */
  round: number;
}) {
  const { list: open, setPage } = usePageOfAlerts(props.filters, props.round);
  if (!open.data)
    return open.error ? <ErrorMessage error={open.error} /> : <Loading label="Loading the open alerts…" />;

  const { data, pagination } = open.data;
  return (
    <section aria-labelledby="sa-open-heading">
      <h2 id="sa-open-heading">Open alerts</h2>
      {open.loading && <Loading label="Updating the list…" />}
      <ErrorMessage error={open.error} />
      {pagination.total === 0 ? (
        <p>No open alerts.</p>
      ) : (
        <p class="sa-summary">{pagination.total} open, most severe first</p>
      )}
      {groupBySeverity(data).map((group) => (
        <section
          key={group.severity}
          class="sa-group"
          data-severity={group.severity}
          aria-labelledby={`sa-group-${group.severity}`}
        >
          <h3 id={`sa-group-${group.severity}`}>{humanize(group.severity)}</h3>
          <AlertList
            alerts={group.alerts}
            headingLevel={4}
            timeZone={props.timeZone}
            allowed={props.allowed}
            onChanged={props.onChanged}
          />
        </section>
      ))}
      <Pager
        label="Pages of open alerts"
        page={pagination.page}
        total={pagination.total}
        size={pagination.limit}
        disabled={open.loading}
        onPage={setPage}
      />
    </section>
  );
}

function ResolvedAlerts(props: { filters: Filters; timeZone: string; round: number }) {
  const { list: resolved, setPage } = usePageOfAlerts(props.filters, props.round);
  if (!resolved.data) {
    return resolved.error ? <ErrorMessage error={resolved.error} /> : <Loading label="Loading the resolved alerts…" />;
  }
  const { data, pagination } = resolved.data;
  return (
    <section aria-labelledby="sa-resolved-heading">
      <h2 id="sa-resolved-heading">Resolved alerts</h2>
      {resolved.loading && <Loading label="Updating the list…" />}
      <ErrorMessage error={resolved.error} />
      {pagination.total === 0 ? (
        <p>No resolved alerts.</p>
      ) : (
        <p class="sa-summary">{pagination.total} resolved, newest first</p>
      )}
      <AlertList
        alerts={data}
        headingLevel={3}
        timeZone={props.timeZone}
        allowed={{ acknowledge: false, resolve: false }}
        onChanged={() => {}}
      />
      <Pager
        label="Pages of resolved alerts"
        page={pagination.page}
        total={pagination.total}
        size={pagination.limit}
        disabled={resolved.loading}
        onPage={setPage}
      />
    </section>
  );
}

export function StockAlertsPage() {
  const { may, config } = useSession();
  const [filters, setFilters] = useState<Filters>({ view: "open", type: "", propertyId: "" });
  const [notice, setNotice] = useState("");
  const noticeRef = useRef<HTMLParagraphElement>(null);
  const [round, setRound] = useState(0);
  const allowed: AlertPermissions = {
    acknowledge: may("POST", "/inventory/alerts/{id}/acknowledge"),
    resolve: may("POST", "/inventory/alerts/{id}/resolve"),
  };

  const changed = (message: string) => {
    setNotice(message);
    setRound((r) => r + 1);
    // The alert's button is gone (acknowledged) or the alert is (resolved): keep focus on the news.
    noticeRef.current?.focus();
  };

  return (
    <Page title="Stock alerts">
      <div class="stock-alerts">
        <p class="sa-intro">
          Raised by the platform when stock falls to its minimum, an item is in poor condition or near its expiry. Times
          are in the company's time zone ({config.businessTimeZone}).
          {!allowed.acknowledge && !allowed.resolve && " Your role can read the alerts but not handle them."}
        </p>
        <FilterBar
          filters={filters}
          onChange={(next) => {
            setNotice("");
            setFilters(next);
          }}
        />
        <p class="sa-refresh">
          {/* Alerts come and go with the evaluations: read them again without leaving the screen. */}
          <button type="button" onClick={() => setRound((r) => r + 1)}>
            Refresh
          </button>
        </p>
        <p role="status" class="sa-notice" tabIndex={-1} ref={noticeRef}>
          {notice}
        </p>
        {filters.view === "open" ? (
          <OpenAlerts
            key={`${filters.type}|${filters.propertyId}`}
            filters={filters}
            timeZone={config.businessTimeZone}
            allowed={allowed}
            onChanged={changed}
            round={round}
          />
        ) : (
          <ResolvedAlerts
            key={`${filters.type}|${filters.propertyId}`}
            filters={filters}
            timeZone={config.businessTimeZone}
            round={round}
          />
        )}
      </div>
    </Page>
  );
}
