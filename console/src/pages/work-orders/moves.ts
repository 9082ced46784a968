// The status moves a work order offers: the ones its detail lists
// (`nextStatuses`, with the member each needs), worded for the console, and
// offered only to who may make them. The API stays the judge: a move it
// refuses shows its message.
import type { components } from "../../api/schema";
import type { WorkOrderStatus } from "./labels";

type StatusMove = components["schemas"]["StatusMove"];

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

/** The button's words and the text box's label; what is required is the API's say. */
function wording(from: WorkOrderStatus, to: WorkOrderStatus): { action: string; label: string } {
  switch (to) {
    case "ON_HOLD":
      return { action: "Put on hold", label: "Why is it on hold?" };
    case "COMPLETED":
      return { action: "Complete", label: "Completion notes" };
    case "CANCELLED":
      return { action: "Cancel work order", label: "Why cancel it?" };
    case "OPEN":
      return { action: "Unassign (back to open)", label: "Reason" };
    case "IN_PROGRESS":
      if (from === "COMPLETED") return { action: "Reopen", label: "Why reopen it?" };
      return { action: from === "ON_HOLD" ? "Resume" : "Start work", label: "Reason" };
    default:
      return { action: to, label: "Reason" };
  }
}

function describe(from: WorkOrderStatus, next: StatusMove): Move {
  const to = next.status;
  const { action, label } = wording(from, to);
  const needed = next.requires === "holdReason" || next.requires === "reason" ? next.requires : null;
  // Without a required member, the text still goes somewhere useful.
  const field = needed ?? (to === "COMPLETED" ? "completionNotes" : to === "ON_HOLD" ? "holdReason" : "reason");
  const note: MoveNote = { field, label, required: needed !== null };
  return { to, action, note, confirm: note.required || to === "COMPLETED" || to === "CANCELLED" };
}

/**
 * The moves to offer from `from`, given the detail's `nextStatuses`: none
 * without write access; cancelling only to those the API lets cancel
 * (maintenance manage).
 */
export function allowedMoves(
  from: WorkOrderStatus,
  nextStatuses: StatusMove[],
  access: { write: boolean; cancel: boolean },
): Move[] {
  if (!access.write) return [];
  return nextStatuses
    .filter((next) => next.status !== "CANCELLED" || access.cancel)
    .map((next) => describe(from, next));
}

/** The PATCH body of a move with the text typed for it (left out when blank). */
export function moveBody(move: Move, text: string): Record<string, string> {
  const body: Record<string, string> = { status: move.to };
  const note = text.trim();
  if (note) body[move.note.field] = note;
  return body;
}
