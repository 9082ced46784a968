// A work order's checklist: each item answered PASS, FAIL or N/A with notes
// and, for a photo item, a photo taken with the device's camera (or chosen
// from its files), uploaded at once as a PHOTO field note of the work order
// and sent with the answer as its `fieldNoteId`. A FAIL opens a follow-up
// work order (the API does, in the same transaction).
import { useState } from "preact/hooks";
import { api } from "../../api/client";
import { unwrap } from "../../api/errors";
import type { components } from "../../api/schema";
import { formatDateTime } from "../../format";
import { Link } from "../../router";
import { ErrorMessage, Loading } from "../../ui/Status";
import { LocalPhoto, NotePhoto } from "./Photo";

type Schemas = components["schemas"];
type Item = Schemas["ChecklistItem"];
type Detail = Schemas["WorkOrderDetail"];
type Result = Schemas["ChecklistResult"];
export type FieldNote = Schemas["FieldNote"];

const RESULT_LABELS: Record<Result, string> = { PASS: "Pass", FAIL: "Fail", NA: "N/A" };

/** Records `file` as a PHOTO field note of the work order. */
export async function uploadPhoto(workOrderId: string, file: File): Promise<FieldNote> {
  const form = new FormData();
  form.set("type", "PHOTO");
  form.set("workOrderId", workOrderId);
  form.set("file", file, file.name || "photo");
  // The body is multipart: openapi-fetch sends FormData as it is (the browser sets the boundary).
  const body = form as unknown as Schemas["FieldNoteForm"];
  return api.POST("/maintenance/field-notes", { body }).then(unwrap);
}

function ChecklistEntry({
  workOrderId,
  item,
  canAnswer,
  timeZone,
  onAnswered,
  onPhoto,
}: {
  workOrderId: string;
  item: Item;
  canAnswer: boolean;
  timeZone: string;
  onAnswered: (detail: Detail) => void;
  onPhoto: () => void;
}) {
  const [notes, setNotes] = useState(item.notes ?? "");
  const [photo, setPhoto] = useState<{ file: File; note?: FieldNote } | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const photoRequired = item.kind === "PHOTO_REQUIRED";
  const fieldNoteId = photo?.note?.id ?? item.fieldNoteId ?? null;
  const needsPhoto = photoRequired && !fieldNoteId;
  const hintId = `hint-${item.id}`;

  const choosePhoto = async (event: Event) => {
    const input = event.currentTarget as HTMLInputElement;
    const file = input.files?.[0];
    if (!file) return;
    setPhoto({ file });
    setBusy("photo");
    setError(undefined);
    try {
      const note = await uploadPhoto(workOrderId, file);
      setPhoto({ file, note });
      onPhoto();
    } catch (e) {
      setPhoto(null);
      setError(e);
    } finally {
      setBusy(null);
      input.value = "";
    }
  };

  const answer = async (result: Result | null) => {
    setBusy(result ?? "clear");
    setError(undefined);
    try {
      const detail = await api
        .PATCH("/maintenance/work-orders/{id}/checklist/{itemId}", {
          params: { path: { id: workOrderId, itemId: item.id } },
          body: { result, notes: notes.trim() || null, fieldNoteId: result ? fieldNoteId : null },
        })
        .then(unwrap);
      setPhoto(null);
      onAnswered(detail);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(null);
    }
  };

  const headingId = `item-${item.id}`;
  return (
    <li class="checklist-item" aria-labelledby={headingId}>
      <h3 id={headingId}>{item.text}</h3>
      {photoRequired && <p class="hint">Photo required</p>}
      <p class="answer">
        {item.result ? (
          <>
            <span class={`result-${item.result.toLowerCase()}`}>{RESULT_LABELS[item.result]}</span>
            {item.answeredBy && ` — ${item.answeredBy}`}
            {item.answeredAt && `, ${formatDateTime(item.answeredAt, timeZone)}`}
          </>
        ) : (
          "Not answered yet"
        )}
      </p>
      {item.notes && !canAnswer && <p>Notes: {item.notes}</p>}
      {item.fieldNoteId && !photo && (
        <NotePhoto noteId={item.fieldNoteId} alt={`Photo for “${item.text}”`} />
      )}
      {item.followUpWorkOrderId && (
        <p>
          Follow-up:{" "}
          <Link to={`/work-orders/${item.followUpWorkOrderId}`} current={false}>
            the repair this failure opened
          </Link>
        </p>
      )}
      {canAnswer && (
        <form onSubmit={(e) => e.preventDefault()}>
          <label for={`notes-${item.id}`}>Notes</label>
          <textarea id={`notes-${item.id}`} value={notes} maxLength={5000}
            onInput={(e) => setNotes((e.currentTarget as HTMLTextAreaElement).value)} />
          <div class="photo-input">
            <label for={`photo-${item.id}`}>
              {item.fieldNoteId || photo ? "Replace the photo" : photoRequired ? "Take or choose a photo" : "Add a photo (optional)"}
            </label>
            <input id={`photo-${item.id}`} type="file" accept="image/*" capture="environment"
              disabled={busy !== null} onChange={choosePhoto} />
          </div>
          {photo && (
            <>
              <LocalPhoto file={photo.file} alt={`New photo for “${item.text}”`} />
              <p role="status">{photo.note ? "Photo recorded." : "Uploading the photo…"}</p>
            </>
          )}
          <div class="actions answer-buttons" role="group" aria-label={`Answer “${item.text}”`}>
            {(Object.keys(RESULT_LABELS) as Result[]).map((result) => (
              <button key={result} type="button" aria-pressed={item.result === result}
                disabled={busy !== null || (result === "PASS" && needsPhoto)}
                aria-describedby={result === "PASS" && needsPhoto ? hintId : undefined}
                onClick={() => answer(result)}>
                {RESULT_LABELS[result]}
              </button>
            ))}
            {item.result && !item.followUpWorkOrderId && (
              <button type="button" disabled={busy !== null} onClick={() => answer(null)}>
                Clear answer
              </button>
            )}
          </div>
          {needsPhoto && (
            <p class="hint" id={hintId}>
              Pass needs a photo: take or choose one first.
            </p>
          )}
          {busy && busy !== "photo" && <Loading label="Saving the answer…" />}
          <ErrorMessage error={error} />
        </form>
      )}
    </li>
  );
}

export function Checklist({
  detail,
  canAnswer,
  timeZone,
  onAnswered,
  onPhoto,
}: {
  detail: Detail;
  canAnswer: boolean;
  timeZone: string;
  onAnswered: (detail: Detail) => void;
  onPhoto: () => void;
}) {
  const answered = detail.checklist.filter((i) => i.result).length;
  return (
    <>
      <p>
        {answered} of {detail.checklist.length} answered.
      </p>
      <ol class="checklist">
        {detail.checklist.map((item) => (
          <ChecklistEntry
            key={item.id}
            workOrderId={detail.id}
            item={item}
            canAnswer={canAnswer}
            timeZone={timeZone}
            onAnswered={onAnswered}
            onPhoto={onPhoto}
          />
        ))}
      </ol>
    </>
  );
}
