import { describe, expect, it } from "vitest";
import { entityPercent, entitySummary, mergeRun } from "./run";

describe("entityPercent", () => {
  it("is the share of pages done while running", () => {
    const progress = { listings: { pagesDone: 1, pagesTotal: 1 }, reservations: { pagesDone: 3, pagesTotal: 12 } };
    expect(entityPercent({ status: "RUNNING", progress }, "reservations")).toBe(25);
    expect(entityPercent({ status: "RUNNING", progress }, "listings")).toBe(100);
  });
  it("is 0 before the entity began, unknown without a page count, 100 once COMPLETED", () => {
    expect(entityPercent({ status: "RUNNING", progress: {} }, "reservations")).toBe(0);
    expect(entityPercent({ status: "RUNNING", progress: { listings: { pagesDone: 2, pagesTotal: null } } }, "listings")).toBeUndefined();
    expect(entityPercent({ status: "COMPLETED", progress: {} }, "listings")).toBe(100);
    // Passes read again count their pages too: never past 100.
    expect(entityPercent({ status: "RUNNING", progress: { listings: { pagesDone: 14, pagesTotal: 12 } } }, "listings")).toBe(100);
  });
});

describe("entitySummary", () => {
  it("says pages and counts, leaving out the zeros", () => {
    expect(entitySummary(undefined)).toBe("not started");
    expect(
      entitySummary({ pagesDone: 12, pagesTotal: 12, fetched: 1200, created: 3, updated: 0, unchanged: 1197, retired: 0 }),
    ).toBe("12 of 12 pages, 1200 fetched: 3 created, 1197 unchanged");
    expect(entitySummary({ pagesDone: 0, pagesTotal: null, fetched: 0 })).toBe("0 pages, 0 fetched");
  });
});

describe("mergeRun", () => {
  it("replaces a run by its id and keeps the newest first", () => {
    const a = { syncId: "a", startedAt: "2030-01-01T10:00:00Z", status: "COMPLETED" };
    const b = { syncId: "b", startedAt: "2030-01-01T11:00:00Z", status: "RUNNING" };
    const c = { syncId: "c", startedAt: "2030-01-01T12:00:00Z", status: "STARTED" };
    expect(mergeRun([b, a], { ...b, status: "COMPLETED" })).toEqual([{ ...b, status: "COMPLETED" }, a]);
    expect(mergeRun([b, a], c).map((r) => r.syncId)).toEqual(["c", "b", "a"]);
  });
});
