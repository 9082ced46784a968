import { describe, expect, it } from "vitest";
import { apiQuery, filterQuery, isFiltered, parseFilters, PAGE_SIZE } from "./filters";
import { toQuery } from "./query";

const villa = "01a2234a-8277-72ca-aea1-1146095842d8";

describe("parseFilters", () => {
  it("reads the filters the API knows, in any letter case", () => {
    const f = parseFilters(new URLSearchParams(`status=open&villaId=${villa}&category=CLEANING&source=turnover&page=3`));
    expect(f).toEqual({
      status: "OPEN",
      villaId: villa,
      category: "CLEANING",
      source: "TURNOVER",
      priority: undefined,
      dueFrom: undefined,
      dueTo: undefined,
      page: 3,
    });
    expect(isFiltered(f)).toBe(true);
  });

  it("reads due days written YYYY-MM-DD, and keeps a range the API will refuse for it to say why", () => {
    const f = parseFilters(new URLSearchParams("dueFrom=2026-12-02&dueTo=2026-12-31"));
    expect([f.dueFrom, f.dueTo]).toEqual(["2026-12-02", "2026-12-31"]);
    expect(isFiltered(parseFilters(new URLSearchParams("dueTo=2026-12-31")))).toBe(true);
    const inverted = parseFilters(new URLSearchParams("dueFrom=2026-12-03&dueTo=2026-12-02"));
    expect([inverted.dueFrom, inverted.dueTo]).toEqual(["2026-12-03", "2026-12-02"]);
  });

  it("leaves out what the API would refuse", () => {
    const f = parseFilters(
      new URLSearchParams("status=DONE&villaId=abc&category=x&page=0&dueFrom=2026-02-30&dueTo=1%20Dec%202026"),
    );
    expect(f).toEqual({
      page: 1,
      status: undefined,
      villaId: undefined,
      category: undefined,
      source: undefined,
      priority: undefined,
      dueFrom: undefined,
      dueTo: undefined,
    });
    expect(isFiltered(f)).toBe(false);
    expect(parseFilters(new URLSearchParams("dueFrom=2026-13-01")).dueFrom).toBeUndefined();
    expect(parseFilters(new URLSearchParams("page=2.5")).page).toBe(1);
  });
});

describe("queries", () => {
  it("writes the URL query in a fixed order, without empty values or page 1", () => {
    expect(toQuery(filterQuery({ page: 1, villaId: villa, status: "OPEN" }))).toBe(`?status=OPEN&villaId=${villa}`);
    expect(toQuery(filterQuery({ page: 2 }))).toBe("?page=2");
    expect(toQuery(filterQuery({ page: 2, dueTo: "2026-12-31", status: "OPEN", dueFrom: "2026-12-01" }))).toBe(
      "?status=OPEN&dueFrom=2026-12-01&dueTo=2026-12-31&page=2",
    );
    expect(toQuery(filterQuery({ page: 1 }))).toBe("");
  });

  it("asks the API for one page of the filtered list", () => {
    expect(apiQuery({ page: 2, source: "INSPECTION" })).toEqual({ page: 2, limit: PAGE_SIZE, source: "INSPECTION" });
    expect(apiQuery({ page: 1, dueFrom: "2026-12-01", dueTo: "2026-12-01" })).toEqual({
      page: 1,
      limit: PAGE_SIZE,
      dueFrom: "2026-12-01",
      dueTo: "2026-12-01",
    });
  });
});
