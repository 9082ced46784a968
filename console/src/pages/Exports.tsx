// Exports: a form (type, format, period, listings) whose "Request export"
// starts one; the list of exports with live status and progress; "Download"
// once COMPLETED; FAILED and EXPIRED shown as such.
//
// GET /reporting/export lists every caller's exports, newest first (each
// names who asked for it); an export PROCESSING in that list, or requested
// here, is followed through GET /reporting/export/{exportId} as its
// Retry-After says, waiting out 429s (api/poll.ts).
import type { JSX } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../api/client";
import { ApiError, apiMessage, unwrap } from "../api/errors";
import { follow, retryAfterMs, untilAllowed } from "../api/poll";
import type { components } from "../api/schema";
import { useApi } from "../api/useApi";
import { formatDate, formatDateTime } from "../format";
import { useSession } from "../session";
import { Page } from "../ui/Page";
import { ErrorMessage, Loading } from "../ui/Status";
import { fileNameFromDisposition, saveBlob } from "./exports/download";
import { fieldErrors, type FieldErrors } from "./exports/fieldErrors";
import { Bar, formatCount, RateLimitWait, StatusBadge } from "./sync/Live";
import "./exports/exports.css";

type Export = components["schemas"]["ReportingExport"];
type ExportRequest = components["schemas"]["ExportRequest"];
type ExportType = ExportRequest["type"];
type ExportFormat = ExportRequest["format"];
interface ListingChoice {
  id: string;
  name: string;
  status: "ACTIVE" | "INACTIVE";
}

const EXPORTS_SHOWN = 20;
/** The form's fields as the API names them: its validation messages name these. */
const FIELDS = ["type", "format", "startDate", "endDate", "listingIds"] as const;
type Field = (typeof FIELDS)[number];

const FIGURES_PERIOD = "The period's first and last nights. Empty: the 30 nights ending today";
const TYPES: { value: ExportType; rows: string; period: string }[] = [
  {
    value: "reservations",
    rows: "One row per reservation.",
    period: "Check-in on or after the start date and on or before the end date; both optional.",
  },
  { value: "listings", rows: "One row per listing, with its figures over the period.", period: `${FIGURES_PERIOD}; at most 366 nights.` },
  { value: "occupancy", rows: "One row per listing and night.", period: `${FIGURES_PERIOD}; at most 366 nights.` },
  {
    value: "revenue",
    rows: "One row per listing and month of the period, then a total.",
    period: `${FIGURES_PERIOD}; at most 730 nights.`,
  },
];

const TYPE_NAMES: Record<ExportType, string> = {
  reservations: "Reservations",
  listings: "Listings",
  occupancy: "Occupancy",
  revenue: "Revenue",
  // Requested through the API (an owner and a month); listed and downloaded here.
  ownerStatement: "Owner statement",
};
const FORMAT_NAMES: Record<ExportFormat, string> = { excel: "Excel", csv: "CSV" };

/** Every listing, for the form's choice (pages of 100, the API's most). */
async function loadListings(signal: AbortSignal): Promise<ListingChoice[]> {
  const all: ListingChoice[] = [];
  for (let page = 1; page <= 20; page++) {
    const answer = await untilAllowed(
      (s) => api.GET("/reporting/listings", { params: { query: { page, limit: 100 } }, signal: s }),
      { signal },
    );
    all.push(...answer.data.map(({ id, name, status }) => ({ id, name, status })));
    if (answer.data.length === 0 || all.length >= answer.pagination.total) break;
  }
  return all;
}

/** The exports shown: the API's page with what this page learnt since, newest first. */
function merged(listed: Export[], known: Map<string, Export>): Export[] {
  const byId = new Map(listed.map((e) => [e.exportId, e]));
  for (const [id, e] of known) byId.set(id, e);
  return [...byId.values()].sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt));
}

function formatBytes(n: number): string {
  if (n < 1024) return `${formatCount(n)} B`;
  if (n < 1024 * 1024) return `${formatCount(Math.round(n / 102.4) / 10)} KB`;
  return `${formatCount(Math.round(n / (1024 * 102.4)) / 10)} MB`;
}

function ExportCard({
  item,
  timeZone,
  onExpired,
}: {
  item: Export;
  timeZone: string;
  onExpired: (e: Export) => void;
}) {
  const [busy, setBusy] = useState(false);
  const [wait, setWait] = useState<number | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const head = `export-${item.exportId}`;

  const download = async () => {
    setBusy(true);
    setError(undefined);
    try {
      let disposition: string | null = null;
      const blob = await untilAllowed(
        async (signal) => {
          const answer = await api.GET("/reporting/export/{exportId}/download", {
            params: { path: { exportId: item.exportId } },
            parseAs: "blob",
            signal,
          });
          disposition = answer.response.headers.get("Content-Disposition");
          if (answer.response.status === 410) onExpired({ ...item, status: "EXPIRED", downloadUrl: null });
          return answer;
        },
        { onWait: setWait },
      );
      saveBlob(blob as Blob, fileNameFromDisposition(disposition) ?? item.fileName);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
      setWait(null);
    }
  };

  const period =
    item.startDate || item.endDate
      ? `${item.startDate ? formatDate(item.startDate, "UTC") : "…"} – ${item.endDate ? formatDate(item.endDate, "UTC") : "…"}`
      : "any";

  return (
    <li aria-labelledby={head}>
      <p class="card-head">
        <StatusBadge status={item.status} />{" "}
        <span id={head}>
          {TYPE_NAMES[item.type]}, {FORMAT_NAMES[item.format]}: <span class="file-name">{item.fileName}</span>
        </span>
      </p>
      <dl class="facts">
        <div>
          <dt>Period</dt>
          <dd>{period}</dd>
        </div>
        {(item.listingIds?.length ?? 0) > 0 && (
          <div>
            <dt>Listings</dt>
            <dd>{formatCount(item.listingIds!.length)} chosen</dd>
          </div>
        )}
        <div>
          <dt>Requested</dt>
          <dd>
            <time dateTime={item.createdAt}>{formatDateTime(item.createdAt, timeZone)}</time>
            {item.requestedBy ? ` by ${item.requestedBy}` : ""}
          </dd>
        </div>
        {item.status === "COMPLETED" && item.rowCount !== null && (
          <div>
            <dt>Rows</dt>
            <dd>{formatCount(item.rowCount)}</dd>
          </div>
        )}
        {item.status === "COMPLETED" && item.sizeBytes != null && (
          <div>
            <dt>Size</dt>
            <dd>{formatBytes(item.sizeBytes)}</dd>
          </div>
        )}
        {item.status === "COMPLETED" && item.expiresAt && (
          <div>
            <dt>Available until</dt>
            <dd>
              <time dateTime={item.expiresAt}>{formatDateTime(item.expiresAt, timeZone)}</time>
            </dd>
          </div>
        )}
      </dl>
      {item.status === "PROCESSING" && <Bar percent={Math.round(item.progress)} label={`Progress of ${item.fileName}`} />}
      {item.status === "FAILED" && <p class="failure">Failed: {item.error ?? "the API gave no reason."}</p>}
      {item.status === "EXPIRED" && <p>Expired: the file was removed. Request the export again for a new one.</p>}
      {item.status === "COMPLETED" && (
        <p class="actions">
          <button type="button" onClick={download} disabled={busy}>
            Download<span class="visually-hidden"> {item.fileName}</span>
          </button>
          {busy && wait === null && <Loading label="Downloading…" />}
        </p>
      )}
      <RateLimitWait until={wait} timeZone={timeZone} what="the file is asked for" />
      <ErrorMessage error={error} />
    </li>
  );
}

export function ExportsPage() {
  const { config, may } = useSession();
  const timeZone = config.businessTimeZone;
  const mayRequest = may("POST", "/reporting/export");

  const listings = useApi((signal) => loadListings(signal), []);
  const [listWait, setListWait] = useState<number | null>(null);
  const list = useApi(
    (signal) =>
      untilAllowed(
        (s) => api.GET("/reporting/export", { params: { query: { limit: EXPORTS_SHOWN } }, signal: s }),
        { signal, onWait: setListWait },
      ),
    [],
  );

  // Exports requested or followed here, in their latest state.
  const [known, setKnown] = useState<Map<string, Export>>(() => new Map());
  const remember = (e: Export) => setKnown((now) => new Map(now).set(e.exportId, e));
  const [followWaits, setFollowWaits] = useState<Map<string, number>>(() => new Map());
  const [followErrors, setFollowErrors] = useState<Map<string, unknown>>(() => new Map());

  // Everything this page started stops when it is left.
  const controller = useRef(new AbortController());
  const followed = useRef(new Set<string>());
  useEffect(() => {
    const c = controller.current;
    return () => c.abort();
  }, []);

  const startFollowing = async (exportId: string) => {
    if (followed.current.has(exportId)) return;
    followed.current.add(exportId);
    const setWait = (until: number | null) =>
      setFollowWaits((now) => {
        const next = new Map(now);
        if (until === null) next.delete(exportId);
        else next.set(exportId, until);
        return next;
      });
    try {
      await follow(
        (signal) => api.GET("/reporting/export/{exportId}", { params: { path: { exportId } }, signal }),
        {
          isFinal: (e) => e.status !== "PROCESSING",
          onUpdate: remember,
          onWait: setWait,
          signal: controller.current.signal,
        },
      );
    } catch (error) {
      // Followed again when the list next shows it still PROCESSING (its Refresh).
      followed.current.delete(exportId);
      if (!controller.current.signal.aborted) setFollowErrors((now) => new Map(now).set(exportId, error));
    } finally {
      if (!controller.current.signal.aborted) setWait(null);
    }
  };

  const shown = merged(list.data?.data ?? [], known);
  const processing = shown.filter((e) => e.status === "PROCESSING").map((e) => e.exportId).join(",");
  useEffect(() => {
    for (const id of processing ? processing.split(",") : []) void startFollowing(id);
    // A reload of the list (list.data) follows again what failed to be followed.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [processing, list.data]);

  // The form.
  const [type, setType] = useState<ExportType>("listings");
  const [format, setFormat] = useState<ExportFormat>("excel");
  const [startDate, setStartDate] = useState("");
  const [endDate, setEndDate] = useState("");
  const [chosen, setChosen] = useState<Set<string>>(() => new Set());
  const [filter, setFilter] = useState("");
  const [submitting, setSubmitting] = useState(false);
  const [problems, setProblems] = useState<FieldErrors | null>(null);
  const [submitError, setSubmitError] = useState<unknown>(undefined);
  const [started, setStarted] = useState<string | null>(null);
  const form = useRef<HTMLFormElement>(null);

  const fieldError = (field: Field) => problems?.fields[field];
  const errorId = (field: Field) => `export-${field}-error`;

  const request = async (event: SubmitEvent) => {
    event.preventDefault();
    setSubmitting(true);
    setProblems(null);
    setSubmitError(undefined);
    setStarted(null);
    const body: ExportRequest = { type, format };
    if (startDate) body.startDate = startDate;
    if (endDate) body.endDate = endDate;
    if (chosen.size > 0) body.listingIds = [...chosen];
    try {
      const answer = await api.POST("/reporting/export", { body, signal: controller.current.signal });
      if (answer.response.status === 400 && answer.error) {
        const found = fieldErrors(answer.error, FIELDS);
        setProblems(found);
        // Focus the first field the API named, so its message is read at once.
        const first = FIELDS.find((f) => found.fields[f]);
        if (first) form.current?.querySelector<HTMLElement>(`[data-field="${first}"]`)?.focus();
        return;
      }
      if (answer.response.status === 429) {
        const wait = retryAfterMs(answer.response.headers.get("Retry-After"));
        const message = apiMessage(answer.error, 429);
        throw new ApiError(wait === undefined ? message : `${message} (try again in ${Math.ceil(wait / 1000)} s)`, 429);
      }
      const { exportId } = unwrap(answer);
      setStarted(exportId);
      void startFollowing(exportId);
    } catch (error) {
      if (!controller.current.signal.aborted) setSubmitError(error);
    } finally {
      if (!controller.current.signal.aborted) setSubmitting(false);
    }
  };

  const toggle = (id: string, on: boolean) =>
    setChosen((now) => {
      const next = new Set(now);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });

  /** aria-describedby: the field's hint, then its error when it has one. */
  const describedBy = (field: Field, hint?: string) =>
    [hint, fieldError(field) ? errorId(field) : undefined].filter(Boolean).join(" ") || undefined;
  const errorOf = (field: Field): JSX.Element | null =>
    fieldError(field) ? (
      <p id={errorId(field)} class="field-error">
        {fieldError(field)}
      </p>
    ) : null;

  const needle = filter.trim().toLowerCase();
  const listingChoices = (listings.data ?? []).filter(
    (l) => chosen.has(l.id) || !needle || l.name.toLowerCase().includes(needle),
  );
  const typeInfo = TYPES.find((t) => t.value === type)!;
  const startedExport = started ? shown.find((e) => e.exportId === started) : undefined;

  return (
    <Page title="Exports">
      <div class="work">
        <section aria-labelledby="export-new">
          <h2 id="export-new">Request an export</h2>
          {!mayRequest && <p>Your role does not allow requesting exports.</p>}
          {mayRequest && (
            <form ref={form} onSubmit={request} noValidate>
              <div class="field">
                <label for="export-type">Type</label>
                <select id="export-type" data-field="type" value={type}
                  onChange={(e) => setType((e.currentTarget as HTMLSelectElement).value as ExportType)}
                  aria-invalid={fieldError("type") ? true : undefined} aria-describedby={describedBy("type", "export-type-hint")}>
                  {TYPES.map((t) => (
                    <option key={t.value} value={t.value}>
                      {TYPE_NAMES[t.value]}
                    </option>
                  ))}
                </select>
                <p id="export-type-hint" class="hint">
                  {typeInfo.rows}
                </p>
                {errorOf("type")}
              </div>

              <fieldset data-field="format" tabIndex={-1} aria-describedby={describedBy("format")}>
                <legend>Format</legend>
                {(
                  [
                    ["excel", "Excel workbook (.xlsx)"],
                    ["csv", "CSV (.csv, UTF-8)"],
                  ] as const
                ).map(([value, label]) => (
                  <label key={value}>
                    <input type="radio" name="export-format" value={value} checked={format === value}
                      onChange={() => setFormat(value)} />
                    {label}
                  </label>
                ))}
                {errorOf("format")}
              </fieldset>

              <fieldset>
                <legend>Period</legend>
                <p id="export-period-hint" class="hint">
                  {typeInfo.period}
                </p>
                <div class="dates">
                  <div class="field">
                    <label for="export-start">Start date</label>
                    <input id="export-start" type="date" data-field="startDate" value={startDate}
                      onInput={(e) => setStartDate((e.currentTarget as HTMLInputElement).value)}
                      aria-invalid={fieldError("startDate") ? true : undefined}
                      aria-describedby={describedBy("startDate", "export-period-hint")} />
                    {errorOf("startDate")}
                  </div>
                  <div class="field">
                    <label for="export-end">End date</label>
                    <input id="export-end" type="date" data-field="endDate" value={endDate}
                      onInput={(e) => setEndDate((e.currentTarget as HTMLInputElement).value)}
                      aria-invalid={fieldError("endDate") ? true : undefined}
                      aria-describedby={describedBy("endDate", "export-period-hint")} />
                    {errorOf("endDate")}
                  </div>
                </div>
              </fieldset>

              <fieldset data-field="listingIds" tabIndex={-1} aria-describedby={describedBy("listingIds", "export-listings-hint")}>
                <legend>Listings</legend>
                <p id="export-listings-hint" class="hint">
                  {chosen.size === 0
                    ? type === "reservations"
                      ? "None chosen: every listing."
                      : "None chosen: every active listing."
                    : `${formatCount(chosen.size)} chosen.`}
                </p>
                {errorOf("listingIds")}
                {listings.data && listings.data.length > 8 && (
                  <div class="field">
                    <label for="export-listing-filter">Find a listing</label>
                    <input id="export-listing-filter" type="search" value={filter}
                      onInput={(e) => setFilter((e.currentTarget as HTMLInputElement).value)} />
                  </div>
                )}
                {listings.loading && !listings.data && <Loading label="Loading the listings…" />}
                <ErrorMessage error={listings.error} />
                {listings.data && (
                  <ul class="listing-choices">
                    {listingChoices.map((l) => (
                      <li key={l.id}>
                        <label class="choice">
                          <input type="checkbox" value={l.id} checked={chosen.has(l.id)}
                            onChange={(e) => toggle(l.id, (e.currentTarget as HTMLInputElement).checked)} />
                          <span>
                            {l.name}
                            {l.status === "INACTIVE" ? " (inactive)" : ""}
                          </span>
                        </label>
                      </li>
                    ))}
                  </ul>
                )}
              </fieldset>

              {problems && (
                <div role="alert" class="form-problems">
                  <p>
                    The API refused the request
                    {problems.summary ? `: ${problems.summary}` : ""}
                    {Object.keys(problems.fields).length > 0 ? ". See the messages by the fields." : "."}
                  </p>
                  {problems.other.length > 0 && (
                    <ul>
                      {problems.other.map((text) => (
                        <li key={text}>{text}</li>
                      ))}
                    </ul>
                  )}
                </div>
              )}
              <ErrorMessage error={submitError} />
              <p class="actions">
                <button type="submit" disabled={submitting}>
                  Request export
                </button>
                {submitting && <Loading label="Requesting the export…" />}
              </p>
              {started && (
                <p role="status">
                  {startedExport?.status === "COMPLETED"
                    ? "The same export is ready: it is in the list below."
                    : "Export requested: it is in the list below."}
                </p>
              )}
            </form>
          )}
        </section>

        <section aria-labelledby="export-list">
          <h2 id="export-list">Recent exports</h2>
          <RateLimitWait until={listWait} timeZone={timeZone} what="the exports are asked for" />
          {list.loading && !list.data && listWait === null && <Loading />}
          <ErrorMessage error={list.error} />
          {(list.data || known.size > 0) &&
            (shown.length === 0 ? (
              <p>No export yet.</p>
            ) : (
              <ol class="cards" aria-label="Exports, newest first">
                {shown.map((item) => (
                  <ExportCard key={item.exportId} item={item} timeZone={timeZone} onExpired={remember} />
                ))}
              </ol>
            ))}
          {[...followWaits.values()].length > 0 && (
            <RateLimitWait until={Math.max(...followWaits.values())} timeZone={timeZone} what="the exports' status is asked for" />
          )}
          {[...followErrors.values()].map((error, i) => (
            <ErrorMessage key={i} error={error} />
          ))}
        </section>
      </div>
    </Page>
  );
}
