// The dashboard's figures as the API gives them: already rounded to 2
// decimals, so they are shown with exactly 2 (money in every currency too,
// whatever its usual minor unit) and never rounded again differently.

import { browserLocale } from "../../format";

const cache = new Map<string, Intl.NumberFormat>();
function formatter(locale: string | undefined, options: Intl.NumberFormatOptions): Intl.NumberFormat {
  const key = `${locale ?? ""}|${JSON.stringify(options)}`;
  let f = cache.get(key);
  if (!f) {
    f = new Intl.NumberFormat(locale, options);
    cache.set(key, f);
  }
  return f;
}

const TWO = { minimumFractionDigits: 2, maximumFractionDigits: 2 } as const;

/**
 * An amount split into its currency code and its number, in the locale's
 * order ("THB" before "391,956.72" in en-GB, after it in de-DE), so the two
 * may wrap apart and be styled apart.
 */
export function moneyParts(amount: number, currency: string, locale = browserLocale()): { part: string; unit: boolean }[] {
  const parts = formatter(locale, { style: "currency", currency, currencyDisplay: "code", ...TWO }).formatToParts(amount);
  const out: { part: string; unit: boolean }[] = [];
  for (const p of parts) {
    const unit = p.type === "currency";
    const text = p.type === "literal" ? p.value.replace(/[\u00a0\u202f]/g, " ") : p.value;
    const last = out[out.length - 1];
    if (last && last.unit === unit) last.part += text;
    else out.push({ part: text, unit });
  }
  return out;
}

/** A figure with 2 decimals ("17.48"). */
export function decimal(value: number, locale = browserLocale()): string {
  return formatter(locale, TWO).format(value);
}

/** A percentage the API gives in percent (17.48 → "17.48%"). */
export function percent(value: number, locale = browserLocale()): string {
  return `${decimal(value, locale)}%`;
}

/** A count ("1,041"). */
export function count(value: number, locale = browserLocale()): string {
  return formatter(locale, { maximumFractionDigits: 0 }).format(value);
}

/** A change in percent with its sign ("+16.11%", "−19.07%", "0.00%"); null: "—". */
export function change(value: number | null, locale = browserLocale()): string {
  if (value === null) return "—";
  return `${formatter(locale, { ...TWO, signDisplay: "exceptZero" }).format(value)}%`;
}

export type Trend = "up" | "down" | "flat" | "none";

export function trend(value: number | null): Trend {
  if (value === null) return "none";
  return value > 0 ? "up" : value < 0 ? "down" : "flat";
}

/** A YYYY-MM-DD day as the reader writes dates ("30 Oct 2026"). */
export function day(value: string, locale = browserLocale(), options: Intl.DateTimeFormatOptions = { dateStyle: "medium" }): string {
  return dateFormatter(locale, options).format(new Date(`${value}T00:00:00Z`));
}

const dateCache = new Map<string, Intl.DateTimeFormat>();
function dateFormatter(locale: string | undefined, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = `${locale ?? ""}|${JSON.stringify(options)}`;
  let f = dateCache.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat(locale, { ...options, timeZone: "UTC" });
    dateCache.set(key, f);
  }
  return f;
}

/** A period of days ("30 Oct – 28 Nov 2026"). */
export function period(start: string, end: string, locale = browserLocale()): string {
  return dateFormatter(locale, { dateStyle: "medium" }).formatRange(
    new Date(`${start}T00:00:00Z`),
    new Date(`${end}T00:00:00Z`),
  );
}

/** A chart label: a day (YYYY-MM-DD) or a month (YYYY-MM), short. */
export function bucketLabel(label: string, locale = browserLocale()): string {
  if (/^\d{4}-\d{2}$/.test(label)) return day(`${label}-01`, locale, { month: "short", year: "numeric" });
  return day(label, locale, { day: "numeric", month: "short" });
}

/** A chart label in full, for tables ("Mon 2 Nov 2026", "November 2026"). */
export function bucketLabelLong(label: string, granularity: "daily" | "weekly" | "monthly", locale = browserLocale()): string {
  if (/^\d{4}-\d{2}$/.test(label)) return day(`${label}-01`, locale, { month: "long", year: "numeric" });
  const text = day(label, locale, { weekday: "short", day: "numeric", month: "short", year: "numeric" });
  return granularity === "weekly" ? `Week of ${text}` : text;
}
