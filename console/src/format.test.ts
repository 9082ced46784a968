import { describe, expect, it } from "vitest";
import { formatDate, formatDateTime, formatMoney } from "./format";

// Intl output uses narrow no-break spaces in some locales; compare with
// plain spaces so the tests say what matters.
const plain = (s: string) => s.replace(/[\u00a0\u202f]/g, " ");

describe("formatMoney", () => {
  it("shows money with its code and 2 decimals in every currency, in the given locale", () => {
    expect(plain(formatMoney(391956.72, "THB", "en-GB"))).toBe("THB 391,956.72");
    expect(plain(formatMoney(49443733, "IDR", "en-GB"))).toBe("IDR 49,443,733.00");
    expect(plain(formatMoney(1234.5, "JPY", "en-GB"))).toBe("JPY 1,234.50");
    expect(plain(formatMoney(1234.5, "EUR", "de-DE"))).toBe("1.234,50 EUR");
  });
});

describe("formatDate / formatDateTime", () => {
  // 2030-01-01T20:30Z is already 2 January in Bangkok (UTC+7).
  const instant = "2030-01-01T20:30:00Z";

  it("reads the day in the given time zone", () => {
    expect(formatDate(instant, "Asia/Bangkok", "en-GB")).toBe("2 Jan 2030");
    expect(formatDate(instant, "UTC", "en-GB")).toBe("1 Jan 2030");
  });

  it("reads the clock in the given time zone", () => {
    expect(plain(formatDateTime(instant, "Asia/Bangkok", "en-GB"))).toBe("2 Jan 2030, 03:30");
    expect(plain(formatDateTime(instant, "Europe/Paris", "en-US"))).toBe("Jan 1, 2030, 9:30 PM");
  });
});
