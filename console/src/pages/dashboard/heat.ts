// The occupancy heat map of listings × nights: each listing's nights as
// booked, free or unavailable, and the nights of every listing summed on a
// scale of a few steps (a colour each, darker for fuller).
import type { OccupancyData } from "./types";

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

/** One listing's night: not available (inactive, or blocked by its owner) comes first. */
export type NightState = "booked" | "free" | "unavailable";

export function nightState(booked: number, available: number): NightState {
  if (!(available > 0)) return "unavailable";
  return booked > 0 ? "booked" : "free";
}

export type HeatRow = {
  listingId: string;
  name: string;
  occupancy: number;
  bookedNights: number;
  availableNights: number;
  /** One per night of the calendar, in its order. */
  nights: NightState[];
};

/**
 * The heat map's rows, in the API's order (highest occupancy first): a
 * listing's nightly figures read night by night along the calendar; a night
 * its arrays lack counts as unavailable rather than shifting the others.
 */
export function heatRows(data: OccupancyData): HeatRow[] {
  return data.byProperty.map((p) => ({
    listingId: p.listingId,
    name: p.name,
    occupancy: p.occupancy,
    bookedNights: p.bookedNights ?? 0,
    availableNights: p.availableNights ?? 0,
    nights: data.calendar.map((_, i) => nightState(p.nightly.bookedNights[i] ?? 0, p.nightly.availableNights[i] ?? 0)),
  }));
}

/** Whether a night's column names its month: the first night, and every 1st. */
export function startsMonth(date: string, index: number): boolean {
  return index === 0 || date.endsWith("-01");
}
