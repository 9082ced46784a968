// The board itself: a table with the days as column headers and the villas
// as row headers, inside its own scrolling region so that a phone scrolls
// the board sideways, never the page.
import { Link } from "../../router";
import { isClosed, labelOf, STATUS_LABELS } from "../work-orders/labels";
import type { BoardDay, BoardGrid } from "./board";

type BoardWorkOrder = BoardDay["workOrders"][number];

function dayFormat(options: Intl.DateTimeFormatOptions) {
  // Dates are calendar days (YYYY-MM-DD): read them at UTC midnight in UTC.
  const format = new Intl.DateTimeFormat(undefined, { ...options, timeZone: "UTC" });
  return (date: string) => format.format(new Date(`${date}T00:00:00Z`));
}

export const weekday = dayFormat({ weekday: "short" });
export const dayMonth = dayFormat({ day: "numeric", month: "short" });
export const longDay = dayFormat({ weekday: "long", day: "numeric", month: "long", year: "numeric" });

function Stays({ entry }: { entry: BoardDay }) {
  return (
    <>
      {entry.sameDayTurnover && <p class="mark same-day">Same-day turnover</p>}
      {entry.checkouts.map((s) => (
        <p key={`out-${s.reservationId}`} class="mark checkout">
          <span class="mark-label">Checkout</span> {s.guestName ?? "Guest"}
        </p>
      ))}
      {entry.checkins.map((s) => (
        <p key={`in-${s.reservationId}`} class="mark checkin">
          <span class="mark-label">Check-in</span> {s.guestName ?? "Guest"}
          <span class="stay-facts">
            {" "}
            · {s.nights} night{s.nights === 1 ? "" : "s"}
            {s.guests != null && ` · ${s.guests} guest${s.guests === 1 ? "" : "s"}`}
          </span>
        </p>
      ))}
    </>
  );
}

function WorkOrderItem({
  order,
  entry,
  onAssign,
}: {
  order: BoardWorkOrder;
  entry: BoardDay;
  onAssign?: (order: BoardWorkOrder, entry: BoardDay) => void;
}) {
  return (
    <li class="board-order">
      <Link to={`/work-orders/${order.id}`} current={false}>
        {order.title}
      </Link>
      <span class={`status status-${order.status.toLowerCase()}`}>{labelOf(STATUS_LABELS, order.status)}</span>
      <span class="assignee">{order.assignee ? order.assignee.name : "Unassigned"}</span>
      {onAssign && !isClosed(order.status) && (
        <button type="button" class="small" onClick={() => onAssign(order, entry)}>
          {order.assignee ? "Reassign" : "Assign"}
          <span class="visually-hidden">
            {" "}
            {order.title}, {entry.villa.name}, {longDay(entry.date)}
          </span>
        </button>
      )}
    </li>
  );
}

export function BoardTable({
  grid,
  today,
  caption,
  onAssign,
}: {
  grid: BoardGrid;
  today: string;
  caption: string;
  /** Offered only to those who may assign. */
  onAssign?: (order: BoardWorkOrder, entry: BoardDay) => void;
}) {
  return (
    <>
      <h2 id="board-caption" class="board-caption">
        {caption}
      </h2>
      <div class="board-scroll" role="region" aria-labelledby="board-caption" tabIndex={0}>
        <table class="board" aria-labelledby="board-caption">
          <thead>
            <tr>
              <th scope="col" class="villa-col">
                Villa
              </th>
              {grid.dates.map((date) => (
                <th key={date} scope="col" class={date === today ? "today" : undefined} aria-current={date === today ? "date" : undefined}>
                  <span class="weekday">{weekday(date)}</span> {dayMonth(date)}
                  {date === today && <span class="today-label"> (today)</span>}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {grid.rows.map((row) => (
              <tr key={row.villa.id}>
                <th scope="row">{row.villa.name}</th>
                {row.cells.map((entry, i) =>
                  entry ? (
                    <td key={grid.dates[i]} class={entry.sameDayTurnover ? "same-day-cell" : undefined}>
                      <Stays entry={entry} />
                      {entry.workOrders.length > 0 && (
                        <ul class="board-orders" aria-label="Work orders">
                          {entry.workOrders.map((order) => (
                            <WorkOrderItem key={order.id} order={order} entry={entry} onAssign={onAssign} />
                          ))}
                        </ul>
                      )}
                    </td>
                  ) : (
                    <td key={grid.dates[i]} class="empty">
                      <span class="visually-hidden">Nothing</span>
                    </td>
                  ),
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
