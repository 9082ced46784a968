// The occupancy heat map: a scale of a few steps (a colour each, darker for
// fuller), and nights laid out as a calendar, one row per week from Monday.

/** Steps of the scale: 0 is an empty night, 1..5 up to 20, 40, 60, 80, 100%. */
export const HEAT_STEPS = 5;

/** The step of an occupancy in percent: 0 for none, else ceil(pct / 20), at most 5. */
export function heatStep(occupancy: number): number {
  if (!(occupancy > 0)) return 0;
  return Math.min(HEAT_STEPS, Math.ceil(occupancy / (100 / HEAT_STEPS)));
}

/** What each step covers, for the legend ("0%", "up to 20%", ..., "80–100%"). */
export function heatLegend(): { step: number; label: string }[] {
  const width = 100 / HEAT_STEPS;
  const steps = [{ step: 0, label: "0%" }];
  for (let step = 1; step <= HEAT_STEPS; step++) {
    const low = (step - 1) * width;
    steps.push({ step, label: step === 1 ? `up to ${width}%` : `${low}–${step * width}%` });
  }
  return steps;
}

/** Monday = 0 ... Sunday = 6 of a YYYY-MM-DD day. */
export function weekday(day: string): number {
  return (new Date(`${day}T00:00:00Z`).getUTCDay() + 6) % 7;
}

/**
 * The nights (consecutive days, in order) as weeks of 7 slots from Monday:
 * each slot is the night's index in `days`, or null outside the period.
 */
export function calendarWeeks(days: readonly string[]): (number | null)[][] {
  const weeks: (number | null)[][] = [];
  if (days.length === 0) return weeks;
  let week: (number | null)[] = Array.from({ length: weekday(days[0]!) }, () => null);
  days.forEach((_, index) => {
    week.push(index);
    if (week.length === 7) {
      weeks.push(week);
      week = [];
    }
  });
  if (week.length > 0) weeks.push([...week, ...Array.from({ length: 7 - week.length }, () => null)]);
  return weeks;
}
