// The five KPIs with their change from the previous period, each with its
// definition (the API's, docs/api/reporting.md) on hover or focus.
import type { ComponentChildren } from "preact";
import { formatMoney } from "../../format";
import { change, count, moneyParts, percent, period, trend } from "./format";
import { Definition } from "./Definition";
import type { Metrics } from "./types";

export type KpiKey = "revenue" | "occupancy" | "adr" | "revpar" | "bookings";

interface Kpi {
  key: KpiKey;
  term: string;
  /** The abbreviation spelled out, when there is one. */
  title?: string;
  value: (m: Metrics) => number;
  previous: (m: Metrics) => number;
  change: (m: Metrics) => number | null;
  format: (value: number, m: Metrics) => string;
  money?: boolean;
  definition: (m: Metrics) => ComponentChildren;
}

const asMoney = (value: number, m: Metrics) => formatMoney(value, m.currency);

export const KPIS: readonly Kpi[] = [
  {
    key: "revenue",
    term: "Revenue",
    value: (m) => m.revenue.total,
    previous: (m) => m.revenue.previous,
    change: (m) => m.revenue.change,
    format: asMoney,
    money: true,
    definition: (m) =>
      `Each confirmed stay's total amount spread evenly over its nights, summed over its nights inside the period, in ${m.currency}. Stays in other currencies are left out, never converted.`,
  },
  {
    key: "occupancy",
    term: "Occupancy",
    value: (m) => m.occupancy.rate,
    previous: (m) => m.occupancy.previous,
    change: (m) => m.occupancy.change,
    format: (v) => percent(v),
    definition: () =>
      "Booked nights / available nights × 100. Available nights: each listing's nights in the period less its owner-stay nights. Booked nights: the nights of confirmed stays inside the period.",
  },
  {
    key: "adr",
    term: "ADR",
    title: "Average daily rate",
    value: (m) => m.adr.value,
    previous: (m) => m.adr.previous,
    change: (m) => m.adr.change,
    format: asMoney,
    money: true,
    definition: (m) => `Average daily rate: revenue / booked nights of the stays in ${m.currency}.`,
  },
  {
    key: "revpar",
    term: "RevPAR",
    title: "Revenue per available night",
    value: (m) => m.revpar.value,
    previous: (m) => m.revpar.previous,
    change: (m) => m.revpar.change,
    format: asMoney,
    money: true,
    definition: () => "Revenue per available night: revenue / available nights (owner-stay nights are not available).",
  },
  {
    key: "bookings",
    term: "Bookings",
    value: (m) => m.bookings.count,
    previous: (m) => m.bookings.previous,
    change: (m) => m.bookings.change,
    format: (v) => count(v),
    definition: () => "Confirmed stays checking in inside the period, in any currency.",
  },
];

const ARROW = { up: "▲", down: "▼", flat: "▶", none: "" } as const;
const TREND_WORDS = { up: "up", down: "down", flat: "unchanged", none: "" } as const;

export function Kpis({ metrics, busy }: { metrics: Metrics; busy: boolean }) {
  const previousPeriod = period(metrics.previousPeriod.startDate, metrics.previousPeriod.endDate);
  return (
    <section class="dash-section" aria-labelledby="dash-kpis-heading" aria-busy={busy}>
      <h2 id="dash-kpis-heading" class="visually-hidden">
        Key figures
      </h2>
      <ul class="dash-kpis">
        {KPIS.map((kpi) => {
          const c = kpi.change(metrics);
          const t = trend(c);
          return (
            <li key={kpi.key} class="dash-kpi" data-testid={`kpi-${kpi.key}`}>
              <h3 class="dash-kpi-term">
                {kpi.title ? <abbr title={kpi.title}>{kpi.term}</abbr> : kpi.term}
                <Definition id={`dash-def-${kpi.key}`} term={kpi.title ? `${kpi.term} (${kpi.title})` : kpi.term}>
                  {kpi.definition(metrics)}
                </Definition>
              </h3>
              <p class="dash-kpi-value" data-testid={`kpi-${kpi.key}-value`}>
                {kpi.money
                  ? moneyParts(kpi.value(metrics), metrics.currency).map(({ part, unit }, i) =>
                      unit ? <span key={i} class="dash-kpi-unit">{part}</span> : part,
                    )
                  : kpi.format(kpi.value(metrics), metrics)}
              </p>
              <p class={`dash-kpi-change dash-trend-${t}`}>
                <span aria-hidden="true">{ARROW[t]} </span>
                <span class="visually-hidden">{TREND_WORDS[t]} </span>
                <span data-testid={`kpi-${kpi.key}-change`}>{change(c)}</span>
                {c === null && <span class="visually-hidden"> (no change: the previous figure is 0)</span>}
              </p>
              <p class="dash-kpi-prev">
                <span title={previousPeriod}>Previous</span>
                <span class="visually-hidden"> ({previousPeriod})</span>:{" "}
                <span data-testid={`kpi-${kpi.key}-previous`}>{kpi.format(kpi.previous(metrics), metrics)}</span>
              </p>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
