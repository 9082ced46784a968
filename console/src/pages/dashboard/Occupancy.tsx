// The occupancy calendar: the nights of the period as a heat map (a week a
// row, from Monday), with its numbers as a table, and each listing's
// occupancy over the period, highest first.
import { ErrorMessage, Loading } from "../../ui/Status";
import { TableToggle } from "./DataTable";
import { count, day, percent, period } from "./format";
import { calendarWeeks, heatLegend, heatStep } from "./heat";
import type { OccupancyData } from "./types";

const WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

function nightText(n: OccupancyData["calendar"][number]): string {
  return `${day(n.date)}: ${percent(n.occupancy)} (${count(n.bookedNights)} of ${count(n.availableNights)} nights booked)`;
}

function Calendar({ data }: { data: OccupancyData }) {
  const nights = data.calendar;
  const weeks = calendarWeeks(nights.map((n) => n.date));
  return (
    <div class="dash-calendar" aria-hidden="true">
      {WEEKDAYS.map((w) => (
        <span key={w} class="dash-calendar-weekday">
          {w.slice(0, 1)}
        </span>
      ))}
      {weeks.flatMap((week, w) =>
        week.map((index, d) => {
          const night = index === null ? undefined : nights[index];
          if (!night) return <span key={`${w}-${d}`} class="dash-cell dash-cell-out" />;
          const blocked = night.availableNights === 0;
          const date = new Date(`${night.date}T00:00:00Z`);
          const first = index === 0 || date.getUTCDate() === 1;
          return (
            <span
              key={night.date}
              class={`dash-cell ${blocked ? "dash-heat-blocked" : `dash-heat-${heatStep(night.occupancy)}`}`}
              title={nightText(night)}
            >
              {first ? day(night.date, undefined, { day: "numeric", month: "short" }) : date.getUTCDate()}
            </span>
          );
        }),
      )}
    </div>
  );
}

function Legend() {
  return (
    <ul class="dash-heat-legend" aria-label="Colour scale">
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
        <div class="dash-occupancy-body">
          <div>
            <h3>Night by night</h3>
            <p class="dash-note">
              {period(data.startDate, data.endDate)}: booked nights of the listings in scope, out of those available.
            </p>
            <Calendar data={data} />
            <Legend />
            <TableToggle id="dash-occupancy-table" what="occupancy by night">
              <table data-testid="occupancy-table">
                <caption>Occupancy by night, {period(data.startDate, data.endDate)}</caption>
                <thead>
                  <tr>
                    <th scope="col">Night</th>
                    <th scope="col">Occupancy</th>
                    <th scope="col">Booked nights</th>
                    <th scope="col">Available nights</th>
                  </tr>
                </thead>
                <tbody>
                  {data.calendar.map((n) => (
                    <tr key={n.date} data-date={n.date}>
                      <th scope="row">{day(n.date, undefined, { weekday: "short", day: "numeric", month: "short", year: "numeric" })}</th>
                      <td>{percent(n.occupancy)}</td>
                      <td>{count(n.bookedNights)}</td>
                      <td>{count(n.availableNights)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableToggle>
          </div>
          <div>
            <h3 id="dash-by-listing-heading">By listing</h3>
            <div class="dash-scroll dash-by-listing" role="region" aria-labelledby="dash-by-listing-heading" tabIndex={0}>
              <table data-testid="occupancy-by-listing">
                <caption class="dash-sr-only">Occupancy by listing, {period(data.startDate, data.endDate)}, highest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Listing</th>
                    <th scope="col" class="dash-num">Occupancy</th>
                  </tr>
                </thead>
                <tbody>
                  {data.byProperty.map((p) => (
                    <tr key={p.listingId}>
                      <th scope="row">
                        <a
                          href={props.listingHref(p.listingId)}
                          onClick={(event) => {
                            if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
                            event.preventDefault();
                            props.onListing(p.listingId);
                          }}
                        >
                          {p.name}
                        </a>
                      </th>
                      <td class="dash-num">
                        <span class={`dash-swatch dash-heat-${heatStep(p.occupancy)}`} aria-hidden="true" />
                        <span data-testid="listing-occupancy">{percent(p.occupancy)}</span>
                        <span class="dash-sub">
                          {count(p.bookedNights ?? 0)} of {count(p.availableNights ?? 0)} nights
                        </span>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </div>
        </div>
      )}
    </section>
  );
}
