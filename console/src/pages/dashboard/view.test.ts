import { describe, expect, it } from "vitest";
import {
  DEFAULT_VIEW,
  lastNights,
  moneyQuery,
  nightsBetween,
  parseDay,
  parseView,
  periodProblem,
  scopeQuery,
  viewToSearch,
  type View,
} from "./view";

const ID = "01a22346-89a5-70e3-a94b-cfd2a2a1e8dc";

describe("parseView / viewToSearch", () => {
  it("reads every parameter of a shared URL", () => {
    expect(
      parseView(`?startDate=2026-10-01&endDate=2026-10-31&listingId=${ID}&currency=usd&chart=occupancy&granularity=weekly`),
    ).toEqual({
      startDate: "2026-10-01",
      endDate: "2026-10-31",
      listingId: ID,
      currency: "USD",
      chart: "occupancy",
      granularity: "weekly",
    });
  });

  it("leaves what it cannot read at the default", () => {
    expect(parseView("")).toEqual(DEFAULT_VIEW);
    expect(
      parseView("?startDate=2026-02-30&endDate=yesterday&listingId=a%20b&currency=EURO&chart=pie&granularity=hourly"),
    ).toEqual(DEFAULT_VIEW);
  });

  it("writes defaults out, in a fixed order, and reads back what it wrote", () => {
    expect(viewToSearch(DEFAULT_VIEW)).toBe("");
    const view: View = {
      startDate: "2026-10-01",
      endDate: "2026-10-31",
      listingId: ID,
      currency: "IDR",
      chart: "revenue",
      granularity: "monthly",
    };
    const search = viewToSearch(view);
    expect(search).toBe(`?startDate=2026-10-01&endDate=2026-10-31&listingId=${ID}&currency=IDR&granularity=monthly`);
    expect(parseView(search)).toEqual(view);
    expect(viewToSearch({ ...DEFAULT_VIEW, chart: "occupancy" })).toBe("?chart=occupancy");
  });

  it("ignores parameters it does not know", () => {
    expect(parseView("?x=1&endDate=2026-01-31")).toEqual({ ...DEFAULT_VIEW, endDate: "2026-01-31" });
  });
});

describe("the API's parameters of a view", () => {
  it("sends only what the view says, the listing as listingIds", () => {
    expect(scopeQuery(DEFAULT_VIEW)).toEqual({});
    expect(moneyQuery(DEFAULT_VIEW)).toEqual({});
    const view = { ...DEFAULT_VIEW, startDate: "2026-01-01", endDate: "2026-01-31", listingId: ID, currency: "USD" };
    expect(scopeQuery(view)).toEqual({ startDate: "2026-01-01", endDate: "2026-01-31", listingIds: ID });
    expect(moneyQuery(view)).toEqual({ startDate: "2026-01-01", endDate: "2026-01-31", listingIds: ID, currency: "USD" });
  });
});

describe("days", () => {
  it("reads only real calendar days", () => {
    expect(parseDay("2028-02-29")).toBe("2028-02-29");
    expect(parseDay("2026-02-29")).toBeNull();
    expect(parseDay("2026-1-5")).toBeNull();
    expect(parseDay("")).toBeNull();
    expect(parseDay(null)).toBeNull();
  });

  it("counts nights with both ends included, across months and years", () => {
    expect(nightsBetween("2026-10-30", "2026-11-28")).toBe(30);
    expect(nightsBetween("2026-01-01", "2026-01-01")).toBe(1);
    expect(nightsBetween("2026-01-02", "2026-01-01")).toBe(0);
  });

  it("ends the default period today, as the API's 30 nights", () => {
    expect(lastNights(30, "2026-11-28")).toEqual({ startDate: "2026-10-30", endDate: "2026-11-28" });
    expect(lastNights(7, "2026-03-03")).toEqual({ startDate: "2026-02-25", endDate: "2026-03-03" });
  });

  it("says why a period cannot be asked for", () => {
    expect(periodProblem("2026-01-01", "2026-01-31")).toBeNull();
    expect(periodProblem("2025-01-01", "2026-01-01")).toBeNull(); // 366 nights
    expect(periodProblem("2024-12-31", "2026-01-01")).toMatch(/at most 366/);
    expect(periodProblem("2026-02-01", "2026-01-31")).toMatch(/not be after/);
    expect(periodProblem("", "2026-01-31")).toMatch(/first night/);
    expect(periodProblem("2026-01-01", "31/01/2026")).toMatch(/last night/);
  });
});
