import { describe, expect, it } from "vitest";
import { calendarWeeks, heatLegend, heatStep, weekday } from "./heat";

describe("heatStep", () => {
  it("puts an empty night alone in step 0 and the rest in fifths", () => {
    expect(heatStep(0)).toBe(0);
    expect(heatStep(0.01)).toBe(1);
    expect(heatStep(20)).toBe(1);
    expect(heatStep(20.01)).toBe(2);
    expect(heatStep(56.67)).toBe(3);
    expect(heatStep(80)).toBe(4);
    expect(heatStep(80.01)).toBe(5);
    expect(heatStep(100)).toBe(5);
  });

  it("keeps out-of-range figures on the scale", () => {
    expect(heatStep(-5)).toBe(0);
    expect(heatStep(Number.NaN)).toBe(0);
    expect(heatStep(140)).toBe(5);
  });

  it("labels every step of the legend", () => {
    expect(heatLegend().map((s) => s.label)).toEqual(["0%", "up to 20%", "20–40%", "40–60%", "60–80%", "80–100%"]);
  });
});

describe("calendarWeeks", () => {
  it("numbers weekdays from Monday", () => {
    expect(weekday("2026-11-30")).toBe(0); // a Monday
    expect(weekday("2026-11-29")).toBe(6); // a Sunday
  });

  it("lays the nights out in weeks from Monday, blanks outside the period", () => {
    // 2026-10-30 is a Friday; 10 nights to Sunday 8 November.
    const days = Array.from({ length: 10 }, (_, i) => {
      const d = new Date(Date.UTC(2026, 9, 30 + i));
      return d.toISOString().slice(0, 10);
    });
    expect(calendarWeeks(days)).toEqual([
      [null, null, null, null, 0, 1, 2],
      [3, 4, 5, 6, 7, 8, 9],
    ]);
    expect(calendarWeeks(days.slice(0, 4))).toEqual([
      [null, null, null, null, 0, 1, 2],
      [3, null, null, null, null, null, null],
    ]);
    expect(calendarWeeks([])).toEqual([]);
  });
});
