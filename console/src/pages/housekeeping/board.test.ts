import { describe, expect, it } from "vitest";
import { addDays } from "../../dates";
import {
  buildBoard,
  datesBetween,
  isDate,
  parseRange,
  rangeProblem,
  shiftRange,
  type BoardDay,
} from "./board";

const villa = (id: string, name: string) => ({ id, name });
const entry = (date: string, v: { id: string; name: string }, more: Partial<BoardDay> = {}): BoardDay => ({
  date,
  villa: v,
  checkouts: [],
  checkins: [],
  sameDayTurnover: false,
  workOrders: [],
  ...more,
});

describe("dates", () => {
  it("lists every date of a range, both ends included", () => {
    expect(datesBetween("2030-01-30", "2030-02-02")).toEqual(["2030-01-30", "2030-01-31", "2030-02-01", "2030-02-02"]);
    expect(datesBetween("2030-01-02", "2030-01-01")).toEqual([]);
  });

  it("tells real dates from malformed ones", () => {
    expect(isDate("2030-02-28")).toBe(true);
    expect(isDate("2030-02-30")).toBe(false);
    expect(isDate("2030-2-3")).toBe(false);
    expect(isDate(null)).toBe(false);
  });
});

describe("parseRange", () => {
  const today = "2030-05-10";
  const q = (s: string) => new URLSearchParams(s);

  it("defaults to today and the next six days, as the API does", () => {
    expect(parseRange(q(""), today)).toEqual({ from: "2030-05-10", to: "2030-05-16", problem: undefined });
  });

  it("fills the missing end with six days on its side", () => {
    expect(parseRange(q("from=2030-06-01"), today)).toMatchObject({ from: "2030-06-01", to: "2030-06-07" });
    expect(parseRange(q("to=2030-06-07"), today)).toMatchObject({ from: "2030-06-01", to: "2030-06-07" });
  });

  it("treats a malformed date as left out", () => {
    expect(parseRange(q("from=tomorrow&to=2030-06-07"), today)).toMatchObject({ from: "2030-06-01" });
  });

  it("says why a range cannot be shown", () => {
    expect(parseRange(q("from=2030-06-07&to=2030-06-01"), today).problem).toMatch(/before/);
    expect(rangeProblem({ from: "2030-01-01", to: addDays("2030-01-01", 61) })).toBeUndefined();
    expect(rangeProblem({ from: "2030-01-01", to: addDays("2030-01-01", 62) })).toMatch(/62 days/);
  });

  it("moves a range by its own length", () => {
    expect(shiftRange({ from: "2030-05-10", to: "2030-05-16" }, 1)).toEqual({ from: "2030-05-17", to: "2030-05-23" });
    expect(shiftRange({ from: "2030-05-10", to: "2030-05-16" }, -1)).toEqual({ from: "2030-05-03", to: "2030-05-09" });
  });
});

describe("buildBoard", () => {
  const zephyr = villa("00000000-0000-0000-0000-00000000000z", "Zephyr Villa");
  const amber = villa("00000000-0000-0000-0000-00000000000a", "amber villa");
  const range = { from: "2030-05-10", to: "2030-05-13" };

  it("puts days across and villas down, by name, with empty days kept", () => {
    const grid = buildBoard(
      [
        entry("2030-05-11", zephyr, { sameDayTurnover: true }),
        entry("2030-05-12", amber),
        entry("2030-05-13", zephyr),
      ],
      range,
      "en",
    );
    expect(grid.dates).toEqual(["2030-05-10", "2030-05-11", "2030-05-12", "2030-05-13"]);
    expect(grid.rows.map((r) => r.villa.name)).toEqual(["amber villa", "Zephyr Villa"]);
    const [a, z] = grid.rows;
    expect(a!.cells.map((c) => c?.date ?? null)).toEqual([null, null, "2030-05-12", null]);
    expect(z!.cells.map((c) => c?.date ?? null)).toEqual([null, "2030-05-11", null, "2030-05-13"]);
    expect(grid.sameDayTurnovers).toBe(1);
  });

  it("counts the work orders and leaves out entries outside the range", () => {
    const wo = { id: "w1", title: "Clean", status: "OPEN" as const, assignee: null, taskRuleId: null };
    const grid = buildBoard(
      [entry("2030-05-10", amber, { workOrders: [wo, { ...wo, id: "w2" }] }), entry("2030-06-01", zephyr)],
      range,
    );
    expect(grid.rows).toHaveLength(1);
    expect(grid.workOrders).toBe(2);
  });

  it("keeps two villas of one name apart", () => {
    const twin = villa("00000000-0000-0000-0000-000000000001", "Zephyr Villa");
    const grid = buildBoard([entry("2030-05-10", zephyr), entry("2030-05-10", twin)], range);
    expect(grid.rows.map((r) => r.villa.id)).toEqual([twin.id, zephyr.id]);
  });
});
