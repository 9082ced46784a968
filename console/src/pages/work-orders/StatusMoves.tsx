// The status moves a work order offers (moves.ts, from the detail's
// nextStatuses), made with PATCH /maintenance/work-orders/{id}. A move that needs words (a hold reason, a
// reopen reason) or cannot be undone (cancelling) asks in a small form first.
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../../api/client";
import { unwrap } from "../../api/errors";
import type { components } from "../../api/schema";
import { ErrorMessage, Loading } from "../../ui/Status";
import { labelOf, STATUS_LABELS } from "./labels";
import { allowedMoves, moveBody, type Move } from "./moves";

type Detail = components["schemas"]["WorkOrderDetail"];

export function StatusMoves({
  detail,
  access,
  onMoved,
}: {
  detail: Detail;
  access: { write: boolean; cancel: boolean };
  onMoved: (detail: Detail, move: Move) => void;
}) {
  const moves = allowedMoves(detail.status, detail.nextStatuses, access);
  const [chosen, setChosen] = useState<Move | null>(null);
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const field = useRef<HTMLTextAreaElement>(null);

  useEffect(() => {
    if (chosen) field.current?.focus();
  }, [chosen]);
  // A new status (after a move) closes the form.
  useEffect(() => {
    setChosen(null);
    setText("");
  }, [detail.status]);

  const make = async (move: Move) => {
    setBusy(true);
    setError(undefined);
    try {
      const body = moveBody(move, text) as components["schemas"]["WorkOrderUpdate"];
      const next = await api
        .PATCH("/maintenance/work-orders/{id}", { params: { path: { id: detail.id } }, body })
        .then(unwrap);
      onMoved(next, move);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  if (moves.length === 0) return null;
  const unanswered = detail.checklist.filter((i) => !i.result);
  const noteId = "move-note";
  return (
    <>
      <div class="actions" role="group" aria-label="Change the status">
        {moves.map((move) => (
          <button key={move.to} type="button" disabled={busy} aria-expanded={move.confirm ? chosen?.to === move.to : undefined}
            onClick={() => {
              setError(undefined);
              if (move.confirm) {
                setText("");
                setChosen(move);
              } else {
                setChosen(null);
                void make(move);
              }
            }}>
            {move.action}
          </button>
        ))}
      </div>
      {chosen && (
        <form class="move-form" onSubmit={(e) => { e.preventDefault(); void make(chosen); }}
          aria-label={`${chosen.action}: to ${labelOf(STATUS_LABELS, chosen.to)}`}>
          {chosen.to === "COMPLETED" && unanswered.length > 0 && (
            <p class="hint">
              Every checklist item must be answered first; not yet: {unanswered.map((i) => i.text).join(", ")}.
            </p>
          )}
          <label for={noteId}>
            {chosen.note.label}
            {chosen.note.required ? " (required)" : " (optional)"}
          </label>
          <textarea id={noteId} ref={field} required={chosen.note.required} value={text}
            onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)} />
          <div class="actions">
            <button type="submit" disabled={busy || (chosen.note.required && !text.trim())}>
              Confirm: {chosen.action.toLowerCase()}
            </button>
            <button type="button" onClick={() => setChosen(null)}>
              Keep the status
            </button>
          </div>
        </form>
      )}
      {busy && <Loading label="Changing the status…" />}
      <ErrorMessage error={error} />
    </>
  );
}
