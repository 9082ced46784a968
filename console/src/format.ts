// Display formatting in the reader's locale. Amounts are never converted:
// the API answers per currency, so the currency code always comes with them.

/** The browser's preferred locale; undefined lets Intl use its default. */
export function browserLocale(): string | undefined {
  return typeof navigator === "undefined" ? undefined : navigator.languages?.[0] ?? navigator.language;
}

/**
 * An amount with its ISO code ("THB 391,956.72") and exactly 2 decimals in
 * every currency: the API rounds amounts to 2 decimals, so they are never
 * rounded again differently.
 */
export function formatMoney(amount: number, currency: string, locale = browserLocale()): string {
  return new Intl.NumberFormat(locale, {
    style: "currency",
    currency,
    currencyDisplay: "code",
    minimumFractionDigits: 2,
    maximumFractionDigits: 2,
  }).format(amount);
}

/**
 * A date and time as the clock reads in `timeZone` (IANA, e.g. the villa's
 * Asia/Bangkok), not the reader's own zone.
 */
export function formatDateTime(
  value: Date | string | number,
  timeZone: string,
  locale = browserLocale(),
): string {
  return new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeStyle: "short", timeZone }).format(
    new Date(value),
  );
}

/** The calendar day in `timeZone`: what "today" means for a villa. */
export function formatDate(value: Date | string | number, timeZone: string, locale = browserLocale()): string {
  return new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeZone }).format(new Date(value));
}
