// Calendar dates written YYYY-MM-DD, as the API sends and takes them. Adding
// and counting days is calendar arithmetic: no time zone involved, except for
// "today", which is the company's day.

/** `date` plus `days` (negative: before), as YYYY-MM-DD. */
export function addDays(date: string, days: number): string {
  const [y, m, d] = date.split("-").map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + days)).toISOString().slice(0, 10);
}

/** Days from `from` to `to` (0 when equal, negative when `to` is before). */
export function daysFrom(from: string, to: string): number {
  const ms = (date: string) => {
    const [y, m, d] = date.split("-").map(Number) as [number, number, number];
    return Date.UTC(y, m - 1, d);
  };
  return Math.round((ms(to) - ms(from)) / 86_400_000);
}

/** Today's date in `timeZone` (the company's day, as the API counts it). */
export function todayIn(timeZone: string, now: Date = new Date()): string {
  // The parts, not a locale's pattern: no locale promises to keep writing YYYY-MM-DD.
  const parts = new Intl.DateTimeFormat("en", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).formatToParts(now);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? "";
  return `${part("year")}-${part("month")}-${part("day")}`;
}
