// One work order (GET /maintenance/work-orders/{id}): its facts, the status
// moves the API allows (asking for a reason where it needs one), assigning
// it, its checklist (answers, photos as field notes), the follow-ups failed
// items opened, its photos and notes, its history and its comments. Readers
// are offered no writes: every control is behind the caller's permissions.
import { useState } from "preact/hooks";
import { api } from "../api/client";
import { unwrap } from "../api/errors";
import { useApi } from "../api/useApi";
import type { components } from "../api/schema";
import { formatDate, formatDateTime } from "../format";
import { Link } from "../router";
import { useSession } from "../session";
import { Page } from "../ui/Page";
import { ErrorMessage, Loading } from "../ui/Status";
import { AssignDialog, type AssignTarget } from "./work-orders/AssignDialog";
import { Checklist } from "./work-orders/Checklist";
import {
  CATEGORY_LABELS,
  isClosed,
  labelOf,
  PRIORITY_LABELS,
  SOURCE_LABELS,
  STATUS_LABELS,
} from "./work-orders/labels";
import { NotePhoto } from "./work-orders/Photo";
import { StatusMoves } from "./work-orders/StatusMoves";
import "./work-orders/work-orders.css";

type Detail = components["schemas"]["WorkOrderDetail"];

function Status({ status }: { status: string }) {
  return <span class={`status status-${status.toLowerCase()}`}>{labelOf(STATUS_LABELS, status)}</span>;
}

function Facts({ w, timeZone }: { w: Detail; timeZone: string }) {
  return (
    <dl class="facts">
      <dt>Status</dt>
      <dd>
        <Status status={w.status} />
        {w.holdReason && ` — ${w.holdReason}`}
      </dd>
      <dt>Villa</dt>
      <dd>{w.villa.name}</dd>
      <dt>Priority</dt>
      <dd>{labelOf(PRIORITY_LABELS, w.priority)}</dd>
      <dt>Category</dt>
      <dd>{labelOf(CATEGORY_LABELS, w.category)}</dd>
      <dt>Source</dt>
      <dd>
        {labelOf(SOURCE_LABELS, w.source)}
        {w.sameDayTurnover && (
          <>
            {" "}
            <span class="flag">Same-day turnover</span>
          </>
        )}
        {w.reservationChanged && (
          <>
            {" "}
            <span class="flag">The stay changed after the work started</span>
          </>
        )}
      </dd>
      <dt>Due</dt>
      <dd>{w.dueDate ? formatDate(w.dueDate, timeZone) : "No due date"}</dd>
      <dt>Assignee</dt>
      <dd>{w.assignee ? w.assignee.name : "Unassigned"}</dd>
      {w.asset && (
        <>
          <dt>Asset</dt>
          <dd>{w.asset.name}</dd>
        </>
      )}
      {w.parentWorkOrderId && (
        <>
          <dt>Opened by</dt>
          <dd>
            <Link to={`/work-orders/${w.parentWorkOrderId}`} current={false}>
              the inspection whose checklist item failed
            </Link>
          </dd>
        </>
      )}
      {w.description && (
        <>
          <dt>Description</dt>
          <dd>{w.description}</dd>
        </>
      )}
      {w.completionNotes && (
        <>
          <dt>Completion notes</dt>
          <dd>{w.completionNotes}</dd>
        </>
      )}
      <dt>Created</dt>
      <dd>
        {formatDateTime(w.createdAt, timeZone)} by {w.createdBy}
      </dd>
    </dl>
  );
}

function FieldNotes({ workOrderId, round, timeZone }: { workOrderId: string; round: number; timeZone: string }) {
  const notes = useApi(
    (signal) =>
      api
        .GET("/maintenance/field-notes", { params: { query: { workOrderId, limit: 100 } }, signal })
        .then(unwrap),
    [workOrderId, round],
  );
  if (!notes.data) return notes.error ? <ErrorMessage error={notes.error} /> : <Loading label="Loading photos and notes…" />;
  if (notes.data.data.length === 0) return <p>No photos or notes yet.</p>;
  return (
    <ul class="notes-list">
      {notes.data.data.map((n, i) => (
        <li key={n.id}>
          <span>
            {n.type === "PHOTO" ? "Photo" : n.type === "VOICE" ? "Voice note" : "Note"} by {n.createdBy},{" "}
            {formatDateTime(n.createdAt, timeZone)}
            {n.storageStatus === "PENDING" && " (being stored)"}
          </span>
          {n.content && <p>{n.content}</p>}
          {n.type === "PHOTO" && <NotePhoto noteId={n.id} alt={`Photo ${notes.data!.data.length - i}, by ${n.createdBy}`} />}
        </li>
      ))}
    </ul>
  );
}

function Comments({ w, canComment, timeZone, onAdded }: { w: Detail; canComment: boolean; timeZone: string; onAdded: () => void }) {
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    if (!text.trim()) return;
    setBusy(true);
    setError(undefined);
    try {
      await api
        .POST("/maintenance/work-orders/{id}/comments", {
          params: { path: { id: w.id } },
          body: { content: text.trim() },
        })
        .then(unwrap);
      setText("");
      onAdded();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      {w.comments.length === 0 ? (
        <p>No comments yet.</p>
      ) : (
        <ul class="comments">
          {w.comments.map((c) => (
            <li key={c.id}>
              <strong>{c.author}</strong>, {formatDateTime(c.createdAt, timeZone)}
              {c.type === "INTERNAL" && " (internal)"}: {c.content}
            </li>
          ))}
        </ul>
      )}
      {canComment && (
        <form onSubmit={submit} class="move-form">
          <label for="comment">Add a comment</label>
          <textarea id="comment" value={text} maxLength={5000}
            onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)} />
          <div class="actions">
            <button type="submit" disabled={busy || !text.trim()}>
              Add comment
            </button>
          </div>
          <ErrorMessage error={error} />
        </form>
      )}
    </>
  );
}

export function WorkOrderPage({ id }: { id: string }) {
  const { config, may, grants } = useSession();
  const tz = config.businessTimeZone;
  const order = useApi(
    (signal) => api.GET("/maintenance/work-orders/{id}", { params: { path: { id } }, signal }).then(unwrap),
    [id],
  );
  const [notesRound, setNotesRound] = useState(0);
  const [assigning, setAssigning] = useState<AssignTarget | null>(null);
  const [announcement, setAnnouncement] = useState("");
  const w = order.data;
  const closed = w ? isClosed(w.status) : true;

  // Each write is offered only to roles the API lets make it (GET /me's operations).
  const canMove = may("PATCH", "/maintenance/work-orders/{id}");
  // Cancelling is a status change the PATCH route allows only with maintenance manage.
  const canCancel = grants("maintenance", "manage");
  const canAssign = may("POST", "/maintenance/work-orders/{id}/assign") && !closed;
  const canAnswer = may("PATCH", "/maintenance/work-orders/{id}/checklist/{itemId}") && may("POST", "/maintenance/field-notes") && !closed;
  const canComment = may("POST", "/maintenance/work-orders/{id}/comments");

  return (
    <Page title={w ? w.title : "Work order"}>
      <div class="wo">
        <p>
          <Link to="/work-orders" current={false}>
            ← All work orders
          </Link>
        </p>
        <ErrorMessage error={order.error} />
        {order.loading && <Loading label={w ? "Refreshing…" : "Loading the work order…"} />}
        <p role="status" class="announcement">
          {announcement}
        </p>
        {w && (
          <>
            <Facts w={w} timeZone={tz} />

            {(canMove || canAssign) && (
              <section class="panel" aria-labelledby="h-status">
                <h2 id="h-status">Status and assignment</h2>
                <StatusMoves
                  detail={w}
                  access={{ write: canMove, cancel: canCancel }}
                  onMoved={(_, move) => {
                    setAnnouncement(`Status changed: ${labelOf(STATUS_LABELS, move.to)}.`);
                    order.reload();
                  }}
                />
                {canAssign && (
                  <div class="actions">
                    <button type="button" onClick={() => setAssigning({
                      id: w.id,
                      title: w.title,
                      villa: w.villa,
                      assigneeId: w.assigneeType === "TECHNICIAN" ? w.assigneeId : null,
                      context: w.villa.name,
                    })}>
                      {w.assignee ? "Reassign" : "Assign"}
                    </button>
                  </div>
                )}
              </section>
            )}

            <section class="panel" aria-labelledby="h-checklist">
              <h2 id="h-checklist">Checklist</h2>
              {w.checklist.length === 0 ? (
                <p>This work order has no checklist.</p>
              ) : (
                <>
                  {!canAnswer && closed && may("PATCH", "/maintenance/work-orders/{id}/checklist/{itemId}") && (
                    <p class="hint">A {labelOf(STATUS_LABELS, w.status).toLowerCase()} work order's checklist cannot change; reopen it first.</p>
                  )}
                  <Checklist
                    detail={w}
                    canAnswer={canAnswer}
                    timeZone={tz}
                    onAnswered={() => order.reload()}
                    onPhoto={() => setNotesRound((r) => r + 1)}
                  />
                </>
              )}
            </section>

            <section class="panel" aria-labelledby="h-follow-ups">
              <h2 id="h-follow-ups">Follow-ups</h2>
              {w.followUps.length === 0 ? (
                <p>No follow-ups: no checklist item has failed.</p>
              ) : (
                <ul class="follow-ups">
                  {w.followUps.map((f) => (
                    <li key={f.id}>
                      <Link to={`/work-orders/${f.id}`} current={false}>
                        {f.title}
                      </Link>{" "}
                      <Status status={f.status} />
                    </li>
                  ))}
                </ul>
              )}
            </section>

            <section class="panel" aria-labelledby="h-notes">
              <h2 id="h-notes">Photos and notes</h2>
              <FieldNotes workOrderId={w.id} round={notesRound} timeZone={tz} />
            </section>

            <section class="panel" aria-labelledby="h-history">
              <h2 id="h-history">History</h2>
              <ol class="history">
                {w.history.map((h, i) => (
                  <li key={`${h.changedAt}-${i}`}>
                    {h.from ? (
                      <>
                        {labelOf(STATUS_LABELS, h.from)} → {labelOf(STATUS_LABELS, h.to)}
                      </>
                    ) : (
                      <>Opened as {labelOf(STATUS_LABELS, h.to)}</>
                    )}
                    , by {h.changedBy}, {formatDateTime(h.changedAt, tz)}
                    {h.reason && <>: “{h.reason}”</>}
                  </li>
                ))}
              </ol>
            </section>

            <section class="panel" aria-labelledby="h-comments">
              <h2 id="h-comments">Comments</h2>
              <Comments w={w} canComment={canComment} timeZone={tz} onAdded={() => order.reload()} />
            </section>

            {w.consumables && w.consumables.length > 0 && (
              <section class="panel" aria-labelledby="h-consumables">
                <h2 id="h-consumables">Consumables drawn</h2>
                <ul>
                  {w.consumables.map((c) => (
                    <li key={c.itemSku}>
                      {c.itemSku}: {String(c.drawn)} of {String(c.wanted)}
                      {Number(c.shortfall) > 0 && ` (short ${String(c.shortfall)})`}
                    </li>
                  ))}
                </ul>
              </section>
            )}

            {canAssign && (
              <AssignDialog
                target={assigning}
                onClose={() => setAssigning(null)}
                onAssigned={(_, name) => {
                  setAnnouncement(`Assigned to ${name}.`);
                  setAssigning(null);
                  order.reload();
                }}
              />
            )}
          </>
        )}
      </div>
    </Page>
  );
}
