// Assigning a work order to a staff member (POST /maintenance/work-orders/{id}/assign,
// assigneeType TECHNICIAN), from the housekeeping board and from a work
// order's page. A native modal <dialog>: the browser keeps focus inside it,
// Escape closes it, and focus returns to the button that opened it.
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../../api/client";
import { unwrap } from "../../api/errors";
import { useApi } from "../../api/useApi";
import type { components } from "../../api/schema";
import { ErrorMessage, Loading } from "../../ui/Status";
import "./work-orders.css";

type Staff = components["schemas"]["StaffView"];
type Detail = components["schemas"]["WorkOrderDetail"];

export interface AssignTarget {
  id: string;
  title: string;
  villa: { id: string; name: string };
  /** Who has it now (preselected). */
  assigneeId?: string | null;
  /** Words for where it is, e.g. "Villa Amara, Tue 8 Dec". */
  context: string;
}

/**
 * The staff to offer, active ones only: the villa's own team first (by
 * name), then everyone else (by name).
 */
export function staffChoices(staff: Staff[], villaId: string, locale?: string) {
  const byName = new Intl.Collator(locale, { sensitivity: "base" });
  const active = staff.filter((s) => s.isActive).sort((a, b) => byName.compare(a.name, b.name));
  const team = active.filter((s) => s.assignments.some((a) => a.villaId === villaId));
  const others = active.filter((s) => !team.includes(s));
  return { team, others };
}

/** The assign route's body: a staff member takes the work as its technician. */
function assignBody(assigneeId: string): components["schemas"]["WorkOrderAssignment"] {
  return { assigneeId, assigneeType: "TECHNICIAN" };
}

export function AssignDialog({
  target,
  onClose,
  onAssigned,
}: {
  target: AssignTarget | null;
  onClose: () => void;
  onAssigned: (detail: Detail, staffName: string) => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [staffId, setStaffId] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  // The staff list is read once, the first time the dialog opens.
  const [wanted, setWanted] = useState(false);
  const staff = useApi(
    (signal) =>
      wanted
        ? api.GET("/management/staff", { params: { query: { limit: 100 } }, signal }).then(unwrap)
        : Promise.resolve(undefined),
    [wanted],
  );

  useEffect(() => {
    const el = dialog.current;
    if (!el) return;
    if (target) {
      setWanted(true);
      setStaffId(target.assigneeId ?? "");
      setError(undefined);
      if (!el.open) el.showModal();
    } else if (el.open) {
      el.close();
    }
  }, [target]);

  const choices = staff.data && target ? staffChoices(staff.data.data, target.villa.id) : null;
  const nameOf = (id: string) => staff.data?.data.find((s) => s.id === id)?.name ?? "";

  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    if (!target || !staffId) return;
    setBusy(true);
    setError(undefined);
    try {
      const detail = await api
        .POST("/maintenance/work-orders/{id}/assign", {
          params: { path: { id: target.id } },
          body: assignBody(staffId),
        })
        .then(unwrap);
      onAssigned(detail as Detail, nameOf(staffId));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <dialog ref={dialog} class="assign-dialog" aria-labelledby="assign-title" onClose={onClose}>
      {target && (
        <form onSubmit={submit}>
          <h2 id="assign-title">Assign work order</h2>
          <p>
            <strong>{target.title}</strong>
            <br />
            {target.context}
          </p>
          {staff.loading && !staff.data && <Loading label="Loading staff…" />}
          <ErrorMessage error={staff.error} />
          {choices && (
            <>
              <label for="assign-staff">Staff member</label>
              <select
                id="assign-staff"
                required
                value={staffId}
                onChange={(e) => setStaffId((e.currentTarget as HTMLSelectElement).value)}
              >
                <option value="">Choose a staff member</option>
                {choices.team.length > 0 && (
                  <optgroup label={`${target.villa.name}'s team`}>
                    {choices.team.map((s) => (
                      <option key={s.id} value={s.id}>
                        {s.name}
                      </option>
                    ))}
                  </optgroup>
                )}
                <optgroup label={choices.team.length > 0 ? "Other staff" : "Staff"}>
                  {choices.others.map((s) => (
                    <option key={s.id} value={s.id}>
                      {s.name}
                    </option>
                  ))}
                </optgroup>
              </select>
              {choices.team.length + choices.others.length === 0 && <p>No active staff to assign.</p>}
            </>
          )}
          <ErrorMessage error={error} />
          <div class="actions">
            <button type="submit" disabled={busy || !staffId}>
              {busy ? "Assigning…" : "Assign"}
            </button>
            <button type="button" onClick={() => dialog.current?.close()}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </dialog>
  );
}
