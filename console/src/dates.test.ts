import { describe, expect, it } from "vitest";
import { addDays, daysFrom, todayIn } from "./dates";

describe("dates", () => {
  it("adds calendar days across month and year ends and leap days", () => {
    expect(addDays("2030-01-31", 1)).toBe("2030-02-01");
    expect(addDays("2030-12-31", 1)).toBe("2031-01-01");
    expect(addDays("2028-02-28", 1)).toBe("2028-02-29");
    expect(addDays("2030-03-01", -1)).toBe("2030-02-28");
  });

  it("counts the days between two dates, negative when backwards", () => {
    expect(daysFrom("2030-01-01", "2030-01-01")).toBe(0);
    expect(daysFrom("2030-12-31", "2031-01-01")).toBe(1);
    expect(daysFrom("2028-03-01", "2028-02-28")).toBe(-2);
  });

  it("reads today in the company's time zone, not the reader's", () => {
    // 20:30 UTC on 1 January is already 2 January in Bangkok (UTC+7).
    const instant = new Date("2030-01-01T20:30:00Z");
    expect(todayIn("UTC", instant)).toBe("2030-01-01");
    expect(todayIn("Asia/Bangkok", instant)).toBe("2030-01-02");
  });
});
