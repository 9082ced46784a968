// One alert: what it is about, where, since when, its state, and the
// Acknowledge and Resolve actions the caller's roles allow.
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../../api/client";
import { unwrap } from "../../api/errors";
import { useAction } from "../../api/useApi";
import { formatDateTime } from "../../format";
import { ErrorMessage } from "../../ui/Status";
import {
  alertFigure,
  humanize,
  isResolutionAction,
  RESOLUTION_ACTION_LABELS,
  RESOLUTION_ACTIONS,
  resolutionLabel,
  type Alert,
} from "./alerts";

export interface AlertPermissions {
  acknowledge: boolean;
  resolve: boolean;
}

function When({ value, timeZone }: { value: string; timeZone: string }) {
  return <time dateTime={value}>{formatDateTime(value, timeZone)}</time>;
}

function byWhom(who: string | null | undefined): string {
  return who ? ` by ${who}` : "";
}

export function AlertCard(props: {
  alert: Alert;
  timeZone: string;
  allowed: AlertPermissions;
  /** The level of the alert's heading, under the headings of its list. */
  headingLevel: 3 | 4;
  /** After a change the API accepted: a sentence to announce; the page reloads the list. */
  onChanged: (message: string) => void;
}) {
  const { alert, timeZone, allowed } = props;
  const [resolving, setResolving] = useState(false);
  const resolveButton = useRef<HTMLButtonElement>(null);
  const headingId = `alert-${alert.id}`;
  const Heading = props.headingLevel === 3 ? "h3" : "h4";
  const name = alert.item.name;
  const figure = alertFigure(alert);
  const open = alert.status === "ACTIVE" || alert.status === "ACKNOWLEDGED";

  const acknowledge = useAction(async () => {
    await api.POST("/inventory/alerts/{id}/acknowledge", { params: { path: { id: alert.id } } }).then(unwrap);
    props.onChanged(`Acknowledged the alert on ${name}.`);
  });

  const canAcknowledge = allowed.acknowledge && alert.status === "ACTIVE";
  const canResolve = allowed.resolve && open;

  return (
    <li class="sa-alert" data-severity={alert.severity}>
      <article aria-labelledby={headingId}>
        <Heading id={headingId}>{name}</Heading>
        <p class="sa-tags">
          <span class="sa-tag sa-severity">{humanize(alert.severity)}</span>
          <span class="sa-tag">{humanize(alert.type)}</span>
          <span class="sa-tag sa-status">{humanize(alert.status)}</span>
        </p>
        <p class="sa-message">{alert.message}</p>
        <dl>
          <div>
            <dt>{figure.label}</dt>
            <dd>{figure.value}</dd>
          </div>
          <div>
            <dt>SKU</dt>
            <dd>{alert.item.sku}</dd>
          </div>
          <div>
            <dt>Location</dt>
            <dd>
              {alert.property.name} · {alert.location.name}
            </dd>
          </div>
          <div>
            <dt>Raised</dt>
            <dd>
              <When value={alert.createdAt} timeZone={timeZone} />
            </dd>
          </div>
          {alert.acknowledgedAt && (
            <div>
              <dt>Acknowledged</dt>
              <dd>
                <When value={alert.acknowledgedAt} timeZone={timeZone} />
                {byWhom(alert.acknowledgedBy)}
              </dd>
            </div>
          )}
          {alert.status === "RESOLVED" && (
            <div>
              <dt>Resolved</dt>
              <dd>
                {resolutionLabel(alert.resolutionAction)}
                {alert.resolvedAt && (
                  <>
                    {", "}
                    <When value={alert.resolvedAt} timeZone={timeZone} />
                  </>
                )}
                {byWhom(alert.resolvedBy)}
              </dd>
            </div>
          )}
          {alert.resolutionNotes && (
            <div>
              <dt>Notes</dt>
              <dd class="sa-notes">{alert.resolutionNotes}</dd>
            </div>
          )}
        </dl>
        {(canAcknowledge || canResolve) && !resolving && (
          <div class="sa-actions">
            {canAcknowledge && (
              <button
                type="button"
                disabled={acknowledge.busy}
                aria-busy={acknowledge.busy}
                onClick={() => void acknowledge.run()}
              >
                {acknowledge.busy ? "Acknowledging…" : "Acknowledge"}
              </button>
            )}
            {canResolve && (
              <button type="button" ref={resolveButton} disabled={acknowledge.busy} onClick={() => setResolving(true)}>
                Resolve
              </button>
            )}
          </div>
        )}
        <p role="status" class="visually-hidden">
          {acknowledge.busy ? "Acknowledging…" : ""}
        </p>
        <ErrorMessage error={acknowledge.error} />
        {resolving && (
          <ResolveForm
            alert={alert}
            onCancel={() => {
              setResolving(false);
              // Back to the button that opened the form, once it is shown again.
              requestAnimationFrame(() => resolveButton.current?.focus());
            }}
            onResolved={(label) => props.onChanged(`Resolved the alert on ${name}: ${label}.`)}
          />
        )}
      </article>
    </li>
  );
}

function ResolveForm(props: { alert: Alert; onCancel: () => void; onResolved: (label: string) => void }) {
  const { alert } = props;
  const [action, setAction] = useState("");
  const [notes, setNotes] = useState("");
  const select = useRef<HTMLSelectElement>(null);
  useEffect(() => select.current?.focus(), []);

  const resolve = useAction(async () => {
    if (!isResolutionAction(action)) throw new Error("Choose the action taken.");
    const trimmed = notes.trim();
    await api
      .POST("/inventory/alerts/{id}/resolve", {
        params: { path: { id: alert.id } },
        body: { action, notes: trimmed ? trimmed : null },
      })
      .then(unwrap);
    props.onResolved(RESOLUTION_ACTION_LABELS[action]);
  });

  const id = `resolve-${alert.id}`;
  return (
    <form
      class="sa-resolve"
      aria-label={`Resolve the alert on ${alert.item.name}`}
      onSubmit={(event) => {
        event.preventDefault();
        void resolve.run();
      }}
    >
      <label for={`${id}-action`}>Action taken</label>
      <select
        id={`${id}-action`}
        ref={select}
        required
        value={action}
        aria-describedby={`${id}-hint`}
        onChange={(event) => setAction(event.currentTarget.value)}
      >
        <option value="">Choose the action taken…</option>
        {RESOLUTION_ACTIONS.map((value) => (
          <option key={value} value={value}>
            {RESOLUTION_ACTION_LABELS[value]}
          </option>
        ))}
      </select>
      <p id={`${id}-hint`} class="sa-hint">
        A resolved alert stays resolved while its cause lasts: a new one is raised only when the cause clears and comes
        back, or gets worse (low stock reaching 0, an expiry date passing).
      </p>
      <label for={`${id}-notes`}>Notes (optional)</label>
      <textarea
        id={`${id}-notes`}
        rows={3}
        maxLength={2000}
        value={notes}
        onInput={(event) => setNotes(event.currentTarget.value)}
      />
      <div class="sa-actions">
        <button type="submit" disabled={resolve.busy} aria-busy={resolve.busy}>
          {resolve.busy ? "Resolving…" : "Resolve alert"}
        </button>
        <button type="button" disabled={resolve.busy} onClick={props.onCancel}>
          Cancel
        </button>
      </div>
      <p role="status" class="visually-hidden">
        {resolve.busy ? "Resolving…" : ""}
      </p>
      <ErrorMessage error={resolve.error} />
    </form>
  );
}
