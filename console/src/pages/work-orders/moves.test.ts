import { describe, expect, it } from "vitest";
import type { components } from "../../api/schema";
import { allowedMoves, moveBody } from "./moves";

type StatusMove = components["schemas"]["StatusMove"];

const staff = { write: true, cancel: false };
const manager = { write: true, cancel: true };
const viewer = { write: false, cancel: false };
const targets = (moves: { to: string }[]) => moves.map((m) => m.to);

// What a detail's nextStatuses look like, as the API answers them.
const fromInProgress: StatusMove[] = [
  { status: "ON_HOLD", requires: "holdReason" },
  { status: "COMPLETED", requires: null },
  { status: "CANCELLED", requires: null },
];
const fromCompleted: StatusMove[] = [{ status: "IN_PROGRESS", requires: "reason" }];
const fromOpen: StatusMove[] = [
  { status: "IN_PROGRESS", requires: null },
  { status: "CANCELLED", requires: null },
];

describe("allowedMoves", () => {
  it("offers the detail's next statuses, cancelling only to managers", () => {
    expect(targets(allowedMoves("OPEN", fromOpen, manager))).toEqual(["IN_PROGRESS", "CANCELLED"]);
    expect(targets(allowedMoves("OPEN", fromOpen, staff))).toEqual(["IN_PROGRESS"]);
    expect(targets(allowedMoves("IN_PROGRESS", fromInProgress, staff))).toEqual(["ON_HOLD", "COMPLETED"]);
    expect(targets(allowedMoves("COMPLETED", fromCompleted, staff))).toEqual(["IN_PROGRESS"]);
  });

  it("offers nothing when the detail lists nothing, and nothing to a reader", () => {
    expect(allowedMoves("CANCELLED", [], manager)).toEqual([]);
    expect(allowedMoves("IN_PROGRESS", fromInProgress, viewer)).toEqual([]);
  });

  it("asks for what the detail says a move requires", () => {
    const hold = allowedMoves("IN_PROGRESS", fromInProgress, staff).find((m) => m.to === "ON_HOLD")!;
    expect(hold.note).toMatchObject({ field: "holdReason", required: true });
    const reopen = allowedMoves("COMPLETED", fromCompleted, staff)[0]!;
    expect(reopen).toMatchObject({ action: "Reopen", note: { field: "reason", required: true } });
    const complete = allowedMoves("IN_PROGRESS", fromInProgress, staff).find((m) => m.to === "COMPLETED")!;
    expect(complete.note).toMatchObject({ field: "completionNotes", required: false });
    const start = allowedMoves("OPEN", fromOpen, staff)[0]!;
    expect(start).toMatchObject({ action: "Start work", note: { required: false }, confirm: false });
  });

  it("words a move by where it starts", () => {
    const resume = allowedMoves("ON_HOLD", [{ status: "IN_PROGRESS", requires: null }], staff)[0]!;
    expect(resume.action).toBe("Resume");
    const unassign = allowedMoves("ASSIGNED", [{ status: "OPEN", requires: null }], staff)[0]!;
    expect(unassign.action).toBe("Unassign (back to open)");
  });

  it("asks before the moves that need words or cannot be undone", () => {
    const confirmed = (from: Parameters<typeof allowedMoves>[0], next: StatusMove[]) =>
      allowedMoves(from, next, manager).filter((m) => m.confirm).map((m) => m.to);
    expect(confirmed("IN_PROGRESS", fromInProgress)).toEqual(["ON_HOLD", "COMPLETED", "CANCELLED"]);
    expect(confirmed("COMPLETED", fromCompleted)).toEqual(["IN_PROGRESS"]);
    expect(confirmed("OPEN", fromOpen)).toEqual(["CANCELLED"]);
  });
});

describe("moveBody", () => {
  it("sends the typed text in the move's field, and nothing when blank", () => {
    const [hold] = allowedMoves("IN_PROGRESS", fromInProgress, staff);
    expect(moveBody(hold!, "  waiting for a part ")).toEqual({ status: "ON_HOLD", holdReason: "waiting for a part" });
    const [start] = allowedMoves("OPEN", fromOpen, staff);
    expect(moveBody(start!, "   ")).toEqual({ status: "IN_PROGRESS" });
  });
});
