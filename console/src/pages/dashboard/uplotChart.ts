// The chart itself, with uPlot: loaded by a dynamic import() only when the
// dashboard has a chart to draw, so the console's first load stays small.
// Its numbers are in the table beside it (Chart.tsx): the canvas is hidden
// from screen readers.
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export interface ChartInput {
  /** Short labels of the buckets, one per point. */
  labels: string[];
  current: number[];
  previous: number[];
  currentName: string;
  previousName: string;
  /** A tick's text on the value axis. */
  formatValue: (value: number) => string;
}

export interface ChartHandle {
  destroy(): void;
}

const HEIGHT = 260;

export function mountChart(el: HTMLElement, input: ChartInput): ChartHandle {
  const n = input.labels.length;
  const xs = input.labels.map((_, i) => i);
  const showPoints = n <= 40;
  const options: uPlot.Options = {
    width: Math.max(200, el.clientWidth),
    height: HEIGHT,
    legend: { show: false },
    cursor: { drag: { x: false, y: false } },
    scales: {
      x: { time: false, range: (_u, min, max) => [min - 0.5, max + 0.5] },
      y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
    },
    axes: [
      {
        incrs: [1, 2, 3, 4, 6, 7, 14, 28, 30, 60, 90, 180, 365],
        values: (_u, splits) => splits.map((i) => (Number.isInteger(i) ? input.labels[i] ?? "" : "")),
        stroke: "#1b1f24",
        grid: { stroke: "#e5e7eb" },
      },
      {
        values: (_u, splits) => splits.map((v) => input.formatValue(v)),
        size: 70,
        stroke: "#1b1f24",
        grid: { stroke: "#e5e7eb" },
      },
    ],
    series: [
      {},
      {
        label: input.currentName,
        stroke: "#0b5cad",
        width: 2,
        points: { show: showPoints, size: 6, fill: "#0b5cad" },
      },
      {
        label: input.previousName,
        stroke: "#6b7280",
        width: 2,
        dash: [6, 4],
        points: { show: showPoints, size: 5, fill: "#ffffff" },
      },
    ],
  };
  const plot = new uPlot(options, [xs, input.current, input.previous], el);
  const resize = new ResizeObserver(() => {
    const width = Math.max(200, el.clientWidth);
    if (width !== plot.width) plot.setSize({ width, height: HEIGHT });
  });
  resize.observe(el);
  return {
    destroy() {
      resize.disconnect();
      plot.destroy();
    },
  };
}
