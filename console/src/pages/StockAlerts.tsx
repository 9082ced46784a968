// Stock alerts (issue 30): the open alerts by severity, most severe first;
// acknowledge; resolve with the action taken. The alerts are raised by
// worker-alerts (docs/api/inventory.md); people only acknowledge and resolve.
//
// `GET /inventory/alerts` pages newest first and filters one status at a
// time, so the open view reads every page of ACTIVE and of ACKNOWLEDGED
// (there is at most one open alert per item and type) and orders them by
// severity here, paging on screen; the resolved view pages as the API does.
import { useRef, useState } from "preact/hooks";
import { api } from "../api/client";
import { unwrap } from "../api/errors";
import { useApi } from "../api/useApi";
import { useSession } from "../session";
import { ErrorMessage, Loading } from "../ui/Status";
import { Page } from "../ui/Page";
import { AlertCard, type AlertPermissions } from "./stock-alerts/AlertCard";
import {
  allPages,
  clampPage,
  countBySeverity,
  groupBySeverity,
  humanize,
  pageSlice,
  sortOpenAlerts,
  type Alert,
  type AlertStatus,
  type AlertType,
} from "./stock-alerts/alerts";
import { Pager } from "./stock-alerts/Pager";
import "./stock-alerts/stock-alerts.css";

/** Alerts shown per page. */
const PAGE_SIZE = 20;
/** The API's largest page, and how many of them the open view reads per status. */
const FETCH_LIMIT = 100;
const FETCH_MAX_PAGES = 10;

const TYPES: AlertType[] = ["LOW_STOCK", "CONDITION", "EXPIRY"];

type View = "open" | "resolved";

interface Filters {
  view: View;
  type: AlertType | "";
  propertyId: string;
}

function listAlerts(filters: Filters, status: AlertStatus, page: number, limit: number, signal: AbortSignal) {
  return api
    .GET("/inventory/alerts", {
      params: {
        query: {
          status,
          page,
          limit,
          type: filters.type || undefined,
          propertyId: filters.propertyId || undefined,
        },
      },
      signal,
    })
    .then(unwrap);
}

/** Every open alert (ACTIVE and ACKNOWLEDGED), in the screen's order. */
async function loadOpen(filters: Filters, signal: AbortSignal) {
  const read = (status: AlertStatus) =>
    allPages((page) => listAlerts(filters, status, page, FETCH_LIMIT, signal), FETCH_MAX_PAGES);
  const [active, acknowledged] = await Promise.all([read("ACTIVE"), read("ACKNOWLEDGED")]);
  // One acknowledged between the two reads may come twice: keep one.
  const byId = new Map<string, Alert>();
  for (const alert of [...active.items, ...acknowledged.items]) byId.set(alert.id, alert);
  return { alerts: sortOpenAlerts([...byId.values()]), total: active.total + acknowledged.total };
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
  const { filters } = props;
  const [page, setPage] = useState(1);
  const open = useApi((signal) => loadOpen(filters, signal), [filters.type, filters.propertyId, props.round]);
  if (!open.data)
    return open.error ? <ErrorMessage error={open.error} /> : <Loading label="Loading the open alerts…" />;

  const { alerts, total } = open.data;
  const current = clampPage(page, alerts.length, PAGE_SIZE);
  const counts = countBySeverity(alerts);
  return (
    <section aria-labelledby="sa-open-heading">
      <h2 id="sa-open-heading">Open alerts</h2>
      {open.loading && <Loading label="Updating the list…" />}
      <ErrorMessage error={open.error} />
      {alerts.length === 0 ? (
        <p>No open alerts.</p>
      ) : (
        <p class="sa-summary">
          {counts.map((c) => `${c.count} ${humanize(c.severity).toLowerCase()}`).join(", ")}
          {total > alerts.length &&
            ` — showing the newest ${alerts.length} of ${total}; narrow the list with the filters`}
        </p>
      )}
      {groupBySeverity(pageSlice(alerts, current, PAGE_SIZE)).map((group) => (
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
      <Pager label="Pages of open alerts" page={current} count={alerts.length} size={PAGE_SIZE} onPage={setPage} />
    </section>
  );
}

function ResolvedAlerts(props: { filters: Filters; timeZone: string; round: number }) {
  const { filters } = props;
  const [page, setPage] = useState(1);
  const resolved = useApi(
    (signal) => listAlerts(filters, "RESOLVED", page, PAGE_SIZE, signal),
    [filters.type, filters.propertyId, page, props.round],
  );
  if (!resolved.data) {
    return resolved.error ? <ErrorMessage error={resolved.error} /> : <Loading label="Loading the resolved alerts…" />;
  }
  const { data, pagination } = resolved.data;
  return (
    <section aria-labelledby="sa-resolved-heading">
      <h2 id="sa-resolved-heading">Resolved alerts</h2>
      {resolved.loading && <Loading label="Updating the list…" />}
      <ErrorMessage error={resolved.error} />
      {data.length === 0 ? (
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
        count={pagination.total}
        size={PAGE_SIZE}
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
