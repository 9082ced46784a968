// The period picker and the listing filter. Applying them writes the view to
// the URL (Dashboard.tsx), so that the view can be shared.
import { useEffect, useState } from "preact/hooks";
import type { Listing } from "./types";
import { lastNights, MAX_NIGHTS, periodProblem, type View } from "./view";

const PRESETS = [7, 30, 90, 365];

export interface Shown {
  startDate: string;
  endDate: string;
  /** The currency the API answered in. */
  currency: string;
}

export function Filters(props: {
  view: View;
  /** The period and currency of the figures on screen (the API's defaults applied). */
  shown: Shown | undefined;
  listings: Listing[] | undefined;
  today: string;
  onApply: (view: View) => void;
}) {
  const { view, shown } = props;
  const [start, setStart] = useState(view.startDate ?? shown?.startDate ?? "");
  const [end, setEnd] = useState(view.endDate ?? shown?.endDate ?? "");
  const [listingId, setListingId] = useState(view.listingId ?? "");
  const [currency, setCurrency] = useState(view.currency ?? "");
  const [problem, setProblem] = useState<string | null>(null);

  // The form follows the view (the URL) and fills in the API's default period.
  const shownStart = shown?.startDate;
  const shownEnd = shown?.endDate;
  useEffect(() => {
    setStart(view.startDate ?? shownStart ?? "");
    setEnd(view.endDate ?? shownEnd ?? "");
    setListingId(view.listingId ?? "");
    setCurrency(view.currency ?? "");
    setProblem(null);
  }, [view.startDate, view.endDate, view.listingId, view.currency, shownStart, shownEnd]);

  const apply = (startDate: string, endDate: string) => {
    const wrong = periodProblem(startDate, endDate);
    setProblem(wrong);
    if (wrong) return;
    props.onApply({ ...view, startDate, endDate, listingId: listingId || null, currency: currency || null });
  };

  const onListing = (id: string) => {
    setListingId(id);
    // A listing's money is in its own currency: show it in that one.
    const listing = props.listings?.find((l) => l.id === id);
    setCurrency(listing?.currency ?? "");
  };

  const currencies = new Set<string>();
  for (const l of props.listings ?? []) if (l.currency) currencies.add(l.currency);
  if (view.currency) currencies.add(view.currency);
  if (currency) currencies.add(currency);
  const defaultCurrency = !view.currency && shown ? shown.currency : undefined;

  const listings = props.listings ?? [];
  const selectedUnknown = listingId !== "" && !listings.some((l) => l.id === listingId);

  return (
    <form
      class="dash-filters"
      aria-label="Period and listing"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        apply(start, end);
      }}
    >
      <fieldset class="dash-presets">
        <legend>Period</legend>
        {PRESETS.map((nights) => {
          const p = lastNights(nights, props.today);
          const current = shown?.startDate === p.startDate && shown.endDate === p.endDate;
          return (
            <button key={nights} type="button" aria-pressed={current}
              onClick={() => { setStart(p.startDate); setEnd(p.endDate); apply(p.startDate, p.endDate); }}>
              Last {nights} nights
            </button>
          );
        })}
      </fieldset>
      <div class="dash-fields">
        <label>
          <span>First night</span>
          <input type="date" name="startDate" value={start} max={end || undefined} required
            aria-invalid={problem ? true : undefined} aria-describedby={problem ? "dash-period-problem" : undefined}
            onInput={(e) => setStart((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <label>
          <span>Last night</span>
          <input type="date" name="endDate" value={end} min={start || undefined} required
            aria-invalid={problem ? true : undefined} aria-describedby={problem ? "dash-period-problem" : undefined}
            onInput={(e) => setEnd((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <label>
          <span>Listing</span>
          <select name="listingId" value={listingId} onChange={(e) => onListing((e.currentTarget as HTMLSelectElement).value)}>
            <option value="">Every active listing</option>
            {selectedUnknown && <option value={listingId}>Listing {listingId}</option>}
            {listings.map((l) => (
              <option key={l.id} value={l.id}>
                {l.name}
                {l.status === "INACTIVE" ? " (inactive)" : ""}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>Currency</span>
          <select name="currency" value={currency} onChange={(e) => setCurrency((e.currentTarget as HTMLSelectElement).value)}>
            <option value="">Default{defaultCurrency ? ` (${defaultCurrency})` : ""}</option>
            {[...currencies].sort().map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Show</button>
      </div>
      {problem && (
        <p id="dash-period-problem" role="alert">
          {problem}
        </p>
      )}
      <p class="dash-note">
        Nights are dated by their evening; both ends are included, at most {MAX_NIGHTS} nights. Money figures count only
        the stays in the chosen currency, never converted.
      </p>
    </form>
  );
}
