// The housekeeping board (GET /maintenance/turnovers): days across, villas
// down; each cell the villa's checkouts, check-ins and the work orders due
// that day, a same-day turnover marked; assigning a work order from it. The
// range is in the URL (?from=YYYY-MM-DD&to=YYYY-MM-DD).
import { useEffect, useState } from "preact/hooks";
import { api } from "../api/client";
import { unwrap } from "../api/errors";
import { useApi } from "../api/useApi";
import { useSession } from "../session";
import { Page } from "../ui/Page";
import { ErrorMessage, Loading } from "../ui/Status";
import { BoardTable, longDay } from "./housekeeping/BoardTable";
import { addDays, todayIn } from "../dates";
import {
  buildBoard,
  DEFAULT_DAYS,
  isDate,
  MAX_DAYS,
  parseRange,
  rangeProblem,
  shiftRange,
  type BoardDay,
  type Range,
} from "./housekeeping/board";
import { AssignDialog, type AssignTarget } from "./work-orders/AssignDialog";
import { useQuery } from "./work-orders/query";
import "./work-orders/work-orders.css";
import "./housekeeping/housekeeping.css";

function RangePicker({
  range,
  today,
  onChange,
}: {
  range: Range;
  today: string;
  onChange: (range: Range) => void;
}) {
  const [from, setFrom] = useState(range.from);
  const [to, setTo] = useState(range.to);
  const [problem, setProblem] = useState<string | undefined>(undefined);
  // The fields follow the range when it changes elsewhere (Back, the step buttons).
  useEffect(() => {
    setFrom(range.from);
    setTo(range.to);
    setProblem(undefined);
  }, [range.from, range.to]);

  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    const asked = { from, to };
    const why = isDate(from) && isDate(to) ? rangeProblem(asked) : "Choose both days.";
    setProblem(why);
    if (!why) onChange(asked);
  };
  const length = DEFAULT_DAYS;
  return (
    <form class="range-picker" onSubmit={submit} aria-label="Days shown" noValidate>
      <div class="field">
        <label for="board-from">From</label>
        <input id="board-from" type="date" required value={from}
          onInput={(e) => setFrom((e.currentTarget as HTMLInputElement).value)}
          aria-describedby={problem ? "board-range-problem" : undefined} />
      </div>
      <div class="field">
        <label for="board-to">To</label>
        <input id="board-to" type="date" required value={to} min={from || undefined}
          max={from ? addDays(from, MAX_DAYS - 1) : undefined}
          onInput={(e) => setTo((e.currentTarget as HTMLInputElement).value)}
          aria-invalid={problem ? true : undefined}
          aria-describedby={problem ? "board-range-problem" : undefined} />
      </div>
      <button type="submit">Show days</button>
      <div class="steps">
        <button type="button" onClick={() => onChange(shiftRange(range, -1))}>
          Earlier
        </button>
        <button type="button" onClick={() => onChange({ from: today, to: addDays(today, length - 1) })}>
          Next {length} days
        </button>
        <button type="button" onClick={() => onChange(shiftRange(range, 1))}>
          Later
        </button>
      </div>
      {problem && (
        <p id="board-range-problem" role="alert">
          {problem}
        </p>
      )}
    </form>
  );
}

export function HousekeepingPage() {
  const { config, may } = useSession();
  const [params, setQuery] = useQuery();
  const today = todayIn(config.businessTimeZone);
  const range = parseRange(params, today);
  const board = useApi(
    (signal) =>
      range.problem
        ? Promise.resolve(undefined)
        : api
            .GET("/maintenance/turnovers", { params: { query: { from: range.from, to: range.to } }, signal })
            .then(unwrap),
    [range.from, range.to],
  );
  const [target, setTarget] = useState<AssignTarget | null>(null);
  const [announcement, setAnnouncement] = useState("");
  const canAssign = may("POST", "/maintenance/work-orders/{id}/assign");

  const grid = board.data ? buildBoard(board.data.data, range) : null;
  const caption = `Turnovers from ${longDay(range.from)} to ${longDay(range.to)}`;

  const openAssign = (order: BoardDay["workOrders"][number], entry: BoardDay) =>
    setTarget({
      id: order.id,
      title: order.title,
      villa: entry.villa,
      assigneeId: order.assignee?.type === "TECHNICIAN" ? order.assignee.id : null,
      context: `${entry.villa.name}, ${longDay(entry.date)}`,
    });

  return (
    <Page title="Housekeeping">
      <div class="wo">
        <RangePicker range={range} today={today} onChange={(r) => setQuery({ from: r.from, to: r.to })} />
        {range.problem && (
          <p role="alert" class="error">
            {range.problem}
          </p>
        )}
        <ErrorMessage error={board.error} />
        {board.loading && <Loading label="Loading the board…" />}
        <p role="status" class="announcement">
          {announcement}
        </p>
        {grid && (
          <>
            <p class="board-summary">
              {grid.rows.length === 0
                ? "No checkouts or check-ins on these days."
                : `${grid.rows.length} villa${grid.rows.length === 1 ? "" : "s"}, ` +
                  `${grid.sameDayTurnovers} same-day turnover${grid.sameDayTurnovers === 1 ? "" : "s"}, ` +
                  `${grid.workOrders} work order${grid.workOrders === 1 ? "" : "s"}.`}
            </p>
            {grid.rows.length > 0 && (
              <BoardTable grid={grid} today={today} caption={caption} onAssign={canAssign ? openAssign : undefined} />
            )}
          </>
        )}
        {canAssign && (
          <AssignDialog
            target={target}
            onClose={() => setTarget(null)}
            onAssigned={(_, name) => {
              setAnnouncement(`${target?.title ?? "The work order"} assigned to ${name}.`);
              setTarget(null);
              board.reload();
            }}
          />
        )}
      </div>
    </Page>
  );
}
