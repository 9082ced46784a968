import { describe, expect, it } from "vitest";
import { bucketLabel, bucketLabelLong, change, count, decimal, moneyParts, percent, period, trend } from "./format";

const plain = (s: string) => s.replace(/[\u00a0\u2009\u202f]/g, " ");

describe("the API's figures, shown with its 2 decimals", () => {
  it("splits the code from the number in the locale's order", () => {
    expect(moneyParts(376.52, "USD", "en-GB")).toEqual([
      { part: "USD", unit: true },
      { part: " 376.52", unit: false },
    ]);
    expect(moneyParts(376.52, "EUR", "de-DE")).toEqual([
      { part: "376,52 ", unit: false },
      { part: "EUR", unit: true },
    ]);
  });

  it("never rounds a figure again", () => {
    expect(decimal(0.1 + 0.2, "en-GB")).toBe("0.30");
    expect(percent(17.48, "en-GB")).toBe("17.48%");
    expect(percent(100, "en-GB")).toBe("100.00%");
    expect(count(1041, "en-GB")).toBe("1,041");
  });

  it("signs a change, and says none when there is nothing to compare with", () => {
    expect(change(16.11, "en-GB")).toBe("+16.11%");
    expect(change(-19.07, "en-GB")).toBe("-19.07%");
    expect(change(0, "en-GB")).toBe("0.00%");
    expect(change(null, "en-GB")).toBe("—");
    expect([trend(1), trend(-1), trend(0), trend(null)]).toEqual(["up", "down", "flat", "none"]);
  });
});

describe("dates", () => {
  it("writes a period and chart labels as days, weeks or months", () => {
    expect(plain(period("2026-10-30", "2026-11-28", "en-GB"))).toBe("30 Oct – 28 Nov 2026");
    expect(bucketLabel("2026-11-02", "en-GB")).toBe("2 Nov");
    expect(bucketLabel("2026-11", "en-GB")).toBe("Nov 2026");
    // (ICU versions differ on the comma after the weekday)
    expect(bucketLabelLong("2026-11-02", "weekly", "en-GB")).toMatch(/^Week of Mon,? 2 Nov 2026$/);
    expect(bucketLabelLong("2026-11-02", "daily", "en-GB")).toMatch(/^Mon,? 2 Nov 2026$/);
    expect(bucketLabelLong("2026-11", "monthly", "en-GB")).toBe("November 2026");
  });
});
