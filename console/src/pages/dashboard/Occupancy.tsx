// The occupancy calendar: a heat map of listings × nights (a listing a row,
// highest occupancy first, each with its occupancy over the period), and a
// last row of the listings shown summed night by night (the API's calendar). It is a real table: each
// night and listing a header, each cell's state as text for screen readers.
import { ErrorMessage, Loading } from "../../ui/Status";
import { count, day, percent, period } from "./format";
import { heatLegend, heatRows, heatStep, startsMonth, type NightState } from "./heat";
import type { OccupancyData } from "./types";

const LEGEND: Record<NightState, string> = {
  booked: "booked",
  free: "free",
  unavailable: "unavailable (inactive or blocked)",
};

function NightHeader({ date, index }: { date: string; index: number }) {
  return (
    <th scope="col" class="dash-heat-night" data-date={date}>
      <span aria-hidden="true">
        <span class="dash-heat-month">{startsMonth(date, index) ? day(date, undefined, { month: "short" }) : ""}</span>
        <span>{day(date, undefined, { weekday: "narrow" })}</span>
        <span>{day(date, undefined, { day: "numeric" })}</span>
      </span>
      <span class="visually-hidden">{day(date, undefined, { weekday: "short", day: "numeric", month: "short", year: "numeric" })}</span>
    </th>
  );
}

function TotalCell({ night }: { night: OccupancyData["calendar"][number] }) {
  const rest = ` of ${count(night.availableNights)} available, ${percent(night.occupancy)}`;
  const step = night.availableNights === 0 ? "blocked" : heatStep(night.occupancy);
  return (
    <td class={`dash-heat-total dash-heat-${step}`} title={`${day(night.date)}: ${count(night.bookedNights)} booked${rest}`}>
      {count(night.bookedNights)}
      <span class="visually-hidden">{rest}</span>
    </td>
  );
}

function Legend() {
  return (
    <div class="dash-heat-legends">
      <ul class="dash-heat-legend" aria-label="A listing's night">
        {(Object.keys(LEGEND) as NightState[]).map((state) => (
          <li key={state}>
            <span class={`dash-swatch dash-night-${state}`} aria-hidden="true" />
            {LEGEND[state]}
          </li>
        ))}
      </ul>
      <ul class="dash-heat-legend" aria-label="All listings shown: booked nights, shaded by occupancy">
        {heatLegend().map(({ step, label }) => (
          <li key={step}>
            <span class={`dash-swatch dash-heat-${step}`} aria-hidden="true" />
            {label}
          </li>
        ))}
        <li>
          <span class="dash-swatch dash-heat-blocked" aria-hidden="true" />
          no night available
        </li>
      </ul>
    </div>
  );
}

export function Occupancy(props: {
  data: OccupancyData | undefined;
  error: unknown;
  busy: boolean;
  listingHref: (listingId: string) => string;
  onListing: (listingId: string) => void;
}) {
  const { data } = props;
  return (
    <section class="dash-section dash-occupancy" aria-labelledby="dash-occupancy-heading" aria-busy={props.busy}>
      <h2 id="dash-occupancy-heading">Occupancy calendar</h2>
      <ErrorMessage error={props.error} />
      {!data && !props.error && <Loading label="Loading the occupancy…" />}
      {data && !props.error && (
        <>
          <p class="dash-note">
            {period(data.startDate, data.endDate)}: each listing's nights, highest occupancy first; the last row counts
            the booked nights of all the listings shown. Choose a listing to see only its figures.
          </p>
          <Legend />
          <div class="dash-scroll dash-heat" role="region" aria-label="Occupancy calendar, listings × nights" tabIndex={0}>
            <table data-testid="occupancy-heat">
              <caption class="visually-hidden">
                Each listing's nights, {period(data.startDate, data.endDate)}: booked, free or unavailable; the last row
                counts the booked nights of all the listings shown, out of those available
              </caption>
              <thead>
                <tr>
                  <th scope="col" class="dash-heat-listing">
                    Listing
                  </th>
                  {data.calendar.map((n, i) => (
                    <NightHeader key={n.date} date={n.date} index={i} />
                  ))}
                </tr>
              </thead>
              <tbody>
                {heatRows(data).map((row) => (
                  <tr key={row.listingId} data-listing-id={row.listingId}>
                    <th scope="row" class="dash-heat-listing">
                      <a
                        href={props.listingHref(row.listingId)}
                        title={`Show only ${row.name}`}
                        onClick={(event) => {
                          if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
                          event.preventDefault();
                          props.onListing(row.listingId);
                        }}
                      >
                        <span class="dash-heat-name">{row.name}</span>
                        <span class="dash-sub">
                          <span data-testid="listing-occupancy">{percent(row.occupancy)}</span> ·{" "}
                          {count(row.bookedNights)} of {count(row.availableNights)} nights
                        </span>
                      </a>
                    </th>
                    {row.nights.map((state, i) => (
                      <td key={i} class={`dash-night dash-night-${state}`}>
                        <span class="visually-hidden">{state}</span>
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
              <tfoot>
                <tr data-testid="occupancy-totals">
                  <th scope="row" class="dash-heat-listing">
                    All listings shown
                    <span class="dash-sub">booked nights</span>
                  </th>
                  {data.calendar.map((n) => (
                    <TotalCell key={n.date} night={n} />
                  ))}
                </tr>
              </tfoot>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
