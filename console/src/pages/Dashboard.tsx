// The dashboard (issue 30): the five KPIs with their change from the previous
// period, the revenue or occupancy chart beside the previous period, the
// occupancy calendar and the upcoming arrivals, for a period and a listing
// that live in the URL (dashboard/view.ts). Every figure is the API's, shown
// with the 2 decimals it is rounded to.
import { useCallback, useEffect, useState } from "preact/hooks";
import { api } from "../api/client";
import { unwrap } from "../api/errors";
import { useApi } from "../api/useApi";
import { onNavigate } from "../router";
import { useSession } from "../session";
import { ErrorMessage, Loading } from "../ui/Status";
import { Page } from "../ui/Page";
import { Arrivals } from "./dashboard/Arrivals";
import { Chart } from "./dashboard/Chart";
import { Filters } from "./dashboard/Filters";
import { period } from "./dashboard/format";
import { Kpis } from "./dashboard/Kpis";
import { Occupancy } from "./dashboard/Occupancy";
import type { Listing } from "./dashboard/types";
import { todayIn } from "../dates";
import { moneyQuery, nightsBetween, parseView, scopeQuery, viewToSearch, type View } from "./dashboard/view";
import "./dashboard/dashboard.css";

/** Every listing, page by page (100 a page), for the filter. */
async function loadListings(signal: AbortSignal): Promise<Listing[]> {
  const all: Listing[] = [];
  for (let page = 1; page <= 50; page++) {
    const answer = unwrap(await api.GET("/reporting/listings", { params: { query: { page, limit: 100 } }, signal }));
    all.push(...answer.data);
    if (answer.data.length === 0 || all.length >= answer.pagination.total) break;
  }
  return all;
}

/** Shown upcoming arrivals; with a listing chosen, its own among the next 100. */
const ARRIVALS = 10;

export function DashboardPage() {
  const { may } = useSession();
  if (!may("GET", "/reporting/dashboard/metrics")) {
    return (
      <Page title="Dashboard">
        <p>Your role does not allow reading the dashboard's figures.</p>
      </Page>
    );
  }
  return <Dashboard />;
}

function Dashboard() {
  const { config } = useSession();
  const [view, setViewState] = useState<View>(() => parseView(location.search));
  // Back/forward, and the navigation's own link to "/", read the URL again.
  useEffect(() => onNavigate(() => setViewState(parseView(location.search))), []);
  /** A new view: into the URL (replacing the entry: the URL is the view to share), then on screen. */
  const setView = useCallback((next: View) => {
    history.replaceState(history.state, "", location.pathname + viewToSearch(next));
    setViewState(next);
  }, []);
  const today = todayIn(config.businessTimeZone);

  const money = moneyQuery(view);
  const scope = scopeQuery(view);
  const moneyKey = JSON.stringify(money);
  const scopeKey = JSON.stringify(scope);

  const metrics = useApi(
    (signal) => api.GET("/reporting/dashboard/metrics", { params: { query: money }, signal }).then(unwrap),
    [moneyKey],
  );
  const chart = useApi(
    (signal) =>
      api
        .GET("/reporting/dashboard/charts", {
          params: { query: { ...money, type: view.chart, period: view.granularity } },
          signal,
        })
        .then(unwrap),
    [moneyKey, view.chart, view.granularity],
  );
  const occupancy = useApi(
    (signal) => api.GET("/reporting/dashboard/occupancy", { params: { query: scope }, signal }).then(unwrap),
    [scopeKey],
  );
  const arrivals = useApi(
    (signal) =>
      api
        .GET("/reporting/dashboard/reservations", {
          params: { query: { limit: view.listingId ? 100 : ARRIVALS } },
          signal,
        })
        .then(unwrap)
        .then((answer) =>
          answer.data.filter((s) => !view.listingId || s.listing?.id === view.listingId).slice(0, ARRIVALS),
        ),
    [view.listingId],
  );
  // The filter's listings wait for the figures, so as not to slow them down.
  const figuresIn = metrics.data !== undefined || metrics.error !== undefined;
  const listings = useApi(
    (signal) => (figuresIn ? loadListings(signal) : new Promise<Listing[]>(() => {})),
    [figuresIn],
  );

  const m = metrics.error ? undefined : metrics.data;
  const shown = m && { startDate: m.period.startDate, endDate: m.period.endDate, currency: m.currency };
  const listingName = (id: string) => listings.data?.find((l) => l.id === id)?.name ?? "one listing";
  const listingView = (id: string): View => ({
    ...view,
    listingId: id,
    startDate: view.startDate ?? m?.period.startDate ?? null,
    endDate: view.endDate ?? m?.period.endDate ?? null,
    currency: listings.data?.find((l) => l.id === id)?.currency ?? view.currency,
  });

  return (
    <Page title="Dashboard">
      <div class="dash">
        <Filters view={view} shown={shown} listings={listings.data} today={today} onApply={setView} />
        {figuresIn && !listings.data && !listings.error && <Loading label="Loading the listings…" />}
        <ErrorMessage error={listings.error} />
        {m && (
          <p class="dash-scope" data-testid="dash-scope">
            <strong>{period(m.period.startDate, m.period.endDate)}</strong> (
            {nightsBetween(m.period.startDate, m.period.endDate)} nights) ·{" "}
            {view.listingId ? listingName(view.listingId) : "every active listing"} · money in {m.currency} · compared
            with {period(m.previousPeriod.startDate, m.previousPeriod.endDate)}
          </p>
        )}
        <ErrorMessage error={metrics.error} />
        {!m && !metrics.error && <Loading label="Loading the figures…" />}
        {m && <Kpis metrics={m} busy={metrics.loading} />}
        <Chart
          data={chart.error ? undefined : chart.data}
          error={chart.error}
          busy={chart.loading}
          type={view.chart}
          granularity={view.granularity}
          onType={(type) => setView({ ...view, chart: type })}
          onGranularity={(granularity) => setView({ ...view, granularity })}
        />
        <Occupancy
          data={occupancy.error ? undefined : occupancy.data}
          error={occupancy.error}
          busy={occupancy.loading}
          listingHref={(id) => location.pathname + viewToSearch(listingView(id))}
          onListing={(id) => setView(listingView(id))}
        />
        <Arrivals
          stays={arrivals.error ? undefined : arrivals.data}
          error={arrivals.error}
          busy={arrivals.loading}
          today={today}
          filtered={view.listingId !== null}
        />
      </div>
    </Page>
  );
}
