import { describe, expect, it } from "vitest";
import { heatLegend, heatRows, heatStep, nightState, startsMonth } from "./heat";

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

describe("heatRows", () => {
  const calendar = ["2026-10-30", "2026-10-31", "2026-11-01"].map((date) => ({
    date,
    occupancy: 0,
    bookedNights: 0,
    availableNights: 0,
  }));
  const listing = (name: string, booked: number[], available: number[]) => ({
    listingId: `id-${name}`,
    name,
    occupancy: 50,
    bookedNights: 1,
    availableNights: 2,
    nightly: { bookedNights: booked, availableNights: available },
  });

  it("tells a listing's night booked, free or unavailable, unavailable first", () => {
    expect(nightState(1, 1)).toBe("booked");
    expect(nightState(0, 1)).toBe("free");
    expect(nightState(0, 0)).toBe("unavailable");
    expect(nightState(1, 0)).toBe("unavailable");
  });

  it("keeps the listings in the API's order, a state per night of the calendar", () => {
    const rows = heatRows({
      startDate: "2026-10-30",
      endDate: "2026-11-01",
      calendar,
      byProperty: [listing("Azul", [1, 0, 0], [1, 1, 0]), listing("Bima", [0, 1, 1], [1, 1, 1])],
    });
    expect(rows.map((r) => r.name)).toEqual(["Azul", "Bima"]);
    expect(rows[0]).toEqual({
      listingId: "id-Azul",
      name: "Azul",
      occupancy: 50,
      bookedNights: 1,
      availableNights: 2,
      nights: ["booked", "free", "unavailable"],
    });
    expect(rows[1]!.nights).toEqual(["free", "booked", "booked"]);
  });

  it("counts a night the arrays lack as unavailable, and missing totals as 0", () => {
    const { bookedNights: _b, availableNights: _a, ...bare } = listing("Cempaka", [1], [1]);
    const [row] = heatRows({ startDate: "2026-10-30", endDate: "2026-11-01", calendar, byProperty: [bare] });
    expect(row!.nights).toEqual(["booked", "unavailable", "unavailable"]);
    expect([row!.bookedNights, row!.availableNights]).toEqual([0, 0]);
  });
});

describe("startsMonth", () => {
  it("names the month over the first night and every 1st", () => {
    expect(startsMonth("2026-10-30", 0)).toBe(true);
    expect(startsMonth("2026-10-31", 1)).toBe(false);
    expect(startsMonth("2026-11-01", 2)).toBe(true);
    expect(startsMonth("2026-11-10", 11)).toBe(false);
  });
});
