// Upcoming arrivals: confirmed stays arriving from today on, and those in
// progress, soonest check-in first (GET /reporting/dashboard/reservations).
import { ErrorMessage, Loading } from "../../ui/Status";
import { formatMoney } from "../../format";
import { count, day } from "./format";
import type { Stay } from "./types";

const CHANNELS: Record<Stay["channel"], string> = {
  AIRBNB: "Airbnb",
  BOOKING_COM: "Booking.com",
  VRBO: "Vrbo",
  EXPEDIA: "Expedia",
  DIRECT: "Direct",
  GOOGLE: "Google",
  OTHER: "Other",
};

export function Arrivals(props: { stays: Stay[] | undefined; error: unknown; busy: boolean; today: string; filtered: boolean }) {
  const { stays } = props;
  return (
    <section class="dash-section" aria-labelledby="dash-arrivals-heading" aria-busy={props.busy}>
      <h2 id="dash-arrivals-heading">Upcoming arrivals</h2>
      <ErrorMessage error={props.error} />
      {!stays && !props.error && <Loading label="Loading the arrivals…" />}
      {stays && !props.error && stays.length === 0 && (
        <p>No confirmed stay arrives from today on{props.filtered ? " at this listing" : ""}.</p>
      )}
      {stays && !props.error && stays.length > 0 && (
        <div class="dash-scroll" role="region" aria-labelledby="dash-arrivals-heading" tabIndex={0}>
          <table data-testid="arrivals" class="dash-stack">
            <caption class="visually-hidden">Confirmed stays arriving from today on, and those in progress, soonest first</caption>
            <thead>
              <tr>
                <th scope="col">Check-in</th>
                <th scope="col">Check-out</th>
                <th scope="col">Guest</th>
                <th scope="col">Listing</th>
                <th scope="col">Nights</th>
                <th scope="col">Channel</th>
                <th scope="col">Total</th>
              </tr>
            </thead>
            <tbody>
              {stays.map((s) => (
                <tr key={s.id}>
                  <td data-label="Check-in">
                    {day(s.checkIn)}
                    {s.checkIn < props.today && <span class="dash-badge"> in progress</span>}
                  </td>
                  <td data-label="Check-out">{day(s.checkOut)}</td>
                  <td data-label="Guest">{s.guestName ?? "—"}</td>
                  <td data-label="Listing">{s.listing?.name ?? (s.listingPmsId !== null ? `PMS listing ${s.listingPmsId}` : "—")}</td>
                  <td data-label="Nights" class="dash-num">{count(s.nights)}</td>
                  <td data-label="Channel">{CHANNELS[s.channel]}</td>
                  <td data-label="Total" class="dash-num">{s.currency ? formatMoney(s.totalAmount, s.currency) : count(s.totalAmount)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
