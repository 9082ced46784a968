// The revenue or occupancy chart, daily, weekly or monthly, with the
// previous period drawn beside it (uPlot, loaded on demand), and its numbers
// as a table.
import { useEffect, useRef, useState } from "preact/hooks";
import { ErrorMessage, Loading } from "../../ui/Status";
import { TableToggle } from "./DataTable";
import { formatMoney } from "../../format";
import { bucketLabel, bucketLabelLong, decimal, percent, period } from "./format";
import type { ChartData } from "./types";
import { CHART_TYPES, GRANULARITIES, type ChartType, type Granularity } from "./view";
import type { ChartHandle } from "./uplotChart";

const TYPE_NAMES: Record<ChartType, string> = { revenue: "Revenue", occupancy: "Occupancy" };
const GRANULARITY_NAMES: Record<Granularity, string> = { daily: "Daily", weekly: "Weekly", monthly: "Monthly" };
const BUCKET_NAMES: Record<Granularity, string> = { daily: "Night", weekly: "Week (from Monday)", monthly: "Month" };

function Choice<T extends string>(props: {
  legend: string;
  name: string;
  options: readonly T[];
  labels: Record<T, string>;
  value: T;
  onChange: (value: T) => void;
}) {
  return (
    <fieldset class="dash-choice">
      <legend>{props.legend}</legend>
      {props.options.map((option) => (
        <label key={option}>
          <input
            type="radio"
            name={props.name}
            value={option}
            checked={props.value === option}
            onChange={() => props.onChange(option)}
          />
          <span>{props.labels[option]}</span>
        </label>
      ))}
    </fieldset>
  );
}

/** The drawn chart; the canvas is hidden from assistive technology (the table says it). */
function Plot({ data }: { data: ChartData }) {
  const box = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<unknown>(undefined);
  useEffect(() => {
    let handle: ChartHandle | undefined;
    let cancelled = false;
    const current = data.datasets.find((d) => d.label !== "Previous period");
    const previous = data.datasets.find((d) => d.label === "Previous period");
    const compact = new Intl.NumberFormat(undefined, { notation: "compact", maximumFractionDigits: 1 });
    import("./uplotChart").then(
      ({ mountChart }) => {
        if (cancelled || !box.current) return;
        box.current.replaceChildren();
        handle = mountChart(box.current, {
          labels: data.labels.map((l) => bucketLabel(l)),
          current: current?.data ?? [],
          previous: previous?.data ?? [],
          currentName: current?.label ?? TYPE_NAMES[data.type],
          previousName: "Previous period",
          formatValue:
            data.type === "occupancy"
              ? (v) => `${Math.round(v)}%`
              : (v) => compact.format(v),
        });
      },
      (e: unknown) => !cancelled && setError(e),
    );
    return () => {
      cancelled = true;
      handle?.destroy();
    };
  }, [data]);
  return (
    <>
      <div class="dash-plot" ref={box} aria-hidden="true" />
      <ErrorMessage error={error} />
    </>
  );
}

export function Chart(props: {
  data: ChartData | undefined;
  error: unknown;
  busy: boolean;
  type: ChartType;
  granularity: Granularity;
  onType: (type: ChartType) => void;
  onGranularity: (granularity: Granularity) => void;
}) {
  const { data } = props;
  const current = data?.datasets.find((d) => d.label !== "Previous period");
  const previous = data?.datasets.find((d) => d.label === "Previous period");
  const unit = data?.type === "occupancy" ? "%" : data?.currency ?? "";
  const show = (v: number | undefined) =>
    v === undefined ? "" : data?.type === "occupancy" ? percent(v) : data?.currency ? formatMoney(v, data.currency) : decimal(v);
  const title = `${TYPE_NAMES[props.type]}, ${GRANULARITY_NAMES[props.granularity].toLowerCase()}`;
  return (
    <section class="dash-section dash-chart" aria-labelledby="dash-chart-heading" aria-busy={props.busy}>
      <h2 id="dash-chart-heading">{title}</h2>
      <div class="dash-chart-controls">
        <Choice legend="Figure" name="dash-chart-type" options={CHART_TYPES} labels={TYPE_NAMES}
          value={props.type} onChange={props.onType} />
        <Choice legend="By" name="dash-granularity" options={GRANULARITIES} labels={GRANULARITY_NAMES}
          value={props.granularity} onChange={props.onGranularity} />
      </div>
      <ErrorMessage error={props.error} />
      {!data && !props.error && <Loading label="Loading the chart…" />}
      {data && !props.error && (
        <>
          <ul class="dash-legend">
            <li>
              <span class="dash-swatch dash-swatch-current" aria-hidden="true" />
              {current?.label ?? TYPE_NAMES[data.type]}
              {data.type === "revenue" && data.currency ? ` (${data.currency})` : ""}: {period(data.startDate, data.endDate)}
            </li>
            {previous && (
              <li>
                <span class="dash-swatch dash-swatch-previous" aria-hidden="true" />
                Previous period
                {previous.startDate && previous.endDate ? `: ${period(previous.startDate, previous.endDate)}` : ""}
              </li>
            )}
          </ul>
          <Plot data={data} />
          <TableToggle id="dash-chart-table" what="chart's figures">
            <table data-testid="chart-table">
              <caption>
                {title} {unit && `(${unit})`}, {period(data.startDate, data.endDate)}, with the previous period
                {previous?.startDate && previous.endDate ? ` (${period(previous.startDate, previous.endDate)})` : ""}
              </caption>
              <thead>
                <tr>
                  <th scope="col">{BUCKET_NAMES[data.period]}</th>
                  <th scope="col">{current?.label ?? TYPE_NAMES[data.type]}</th>
                  <th scope="col">Previous period</th>
                </tr>
              </thead>
              <tbody>
                {data.labels.map((label, i) => (
                  <tr key={label} data-label={label}>
                    <th scope="row">{bucketLabelLong(label, data.period)}</th>
                    <td>{show(current?.data[i])}</td>
                    <td>{show(previous?.data[i])}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableToggle>
        </>
      )}
    </section>
  );
}
