// The status moves a work order offers: the API's transitions
// (docs/api/maintenance.md, "Work orders start OPEN"), what each needs said,
// and who may make them. The API stays the judge: a move it refuses shows
// its message; this only keeps the console from offering what cannot work.
import type { WorkOrderStatus } from "./labels";

/** The API's transitions, as the work-order update route documents them. */
export const TRANSITIONS: Record<WorkOrderStatus, WorkOrderStatus[]> = {
  OPEN: ["IN_PROGRESS", "CANCELLED"],
  ASSIGNED: ["IN_PROGRESS", "OPEN", "CANCELLED"],
  IN_PROGRESS: ["ON_HOLD", "COMPLETED", "CANCELLED"],
  ON_HOLD: ["IN_PROGRESS", "CANCELLED"],
  COMPLETED: ["IN_PROGRESS"],
  CANCELLED: [],
};

/** What the move's text box sends, and whether the API needs it. */
export interface MoveNote {
  /** The body field the text goes in. */
  field: "holdReason" | "reason" | "completionNotes";
  label: string;
  required: boolean;
}

export interface Move {
  to: WorkOrderStatus;
  /** The button's words. */
  action: string;
  note: MoveNote;
  /**
   * Whether the move opens a form before it is made: when the API needs a
   * reason, and for completing (its notes) and cancelling (final).
   */
  confirm: boolean;
}

function describe(from: WorkOrderStatus, to: WorkOrderStatus): Move {
  const move = describeMove(from, to);
  return { ...move, confirm: move.note.required || to === "COMPLETED" || to === "CANCELLED" };
}

function describeMove(from: WorkOrderStatus, to: WorkOrderStatus): Omit<Move, "confirm"> {
  switch (to) {
    case "ON_HOLD":
      return { to, action: "Put on hold", note: { field: "holdReason", label: "Why is it on hold?", required: true } };
    case "COMPLETED":
      return { to, action: "Complete", note: { field: "completionNotes", label: "Completion notes", required: false } };
    case "CANCELLED":
      return { to, action: "Cancel work order", note: { field: "reason", label: "Why cancel it?", required: false } };
    case "OPEN":
      return { to, action: "Unassign (back to open)", note: { field: "reason", label: "Reason", required: false } };
    case "IN_PROGRESS":
      if (from === "COMPLETED") {
        return { to, action: "Reopen", note: { field: "reason", label: "Why reopen it?", required: true } };
      }
      return {
        to,
        action: from === "ON_HOLD" ? "Resume" : "Start work",
        note: { field: "reason", label: "Reason", required: false },
      };
    default:
      return { to, action: to, note: { field: "reason", label: "Reason", required: false } };
  }
}

/**
 * The moves to offer from `from`: none without write access; cancelling only
 * to those the API lets cancel (managers and admins).
 */
export function allowedMoves(
  from: WorkOrderStatus,
  access: { write: boolean; cancel: boolean },
): Move[] {
  if (!access.write) return [];
  return (TRANSITIONS[from] ?? [])
    .filter((to) => to !== "CANCELLED" || access.cancel)
    .map((to) => describe(from, to));
}

/** The PATCH body of a move with the text typed for it (left out when blank). */
export function moveBody(move: Move, text: string): Record<string, string> {
  const body: Record<string, string> = { status: move.to };
  const note = text.trim();
  if (note) body[move.note.field] = note;
  return body;
}
