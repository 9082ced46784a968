import { describe, expect, it } from "vitest";
import { allowedMoves, moveBody, TRANSITIONS } from "./moves";

const staff = { write: true, cancel: false };
const manager = { write: true, cancel: true };
const viewer = { write: false, cancel: false };
const targets = (moves: { to: string }[]) => moves.map((m) => m.to);

describe("allowedMoves", () => {
  it("offers the API's transitions, cancelling only to managers", () => {
    expect(targets(allowedMoves("OPEN", manager))).toEqual(["IN_PROGRESS", "CANCELLED"]);
    expect(targets(allowedMoves("OPEN", staff))).toEqual(["IN_PROGRESS"]);
    expect(targets(allowedMoves("ASSIGNED", staff))).toEqual(["IN_PROGRESS", "OPEN"]);
    expect(targets(allowedMoves("IN_PROGRESS", staff))).toEqual(["ON_HOLD", "COMPLETED"]);
    expect(targets(allowedMoves("ON_HOLD", manager))).toEqual(["IN_PROGRESS", "CANCELLED"]);
    expect(targets(allowedMoves("COMPLETED", staff))).toEqual(["IN_PROGRESS"]);
  });

  it("offers nothing from CANCELLED, and nothing to a reader", () => {
    expect(allowedMoves("CANCELLED", manager)).toEqual([]);
    for (const from of Object.keys(TRANSITIONS)) {
      expect(allowedMoves(from as keyof typeof TRANSITIONS, viewer)).toEqual([]);
    }
  });

  it("never offers ASSIGNED: that is the assign route's", () => {
    for (const next of Object.values(TRANSITIONS)) expect(next).not.toContain("ASSIGNED");
  });

  it("asks for a reason where the API needs one", () => {
    const hold = allowedMoves("IN_PROGRESS", staff).find((m) => m.to === "ON_HOLD")!;
    expect(hold.note).toMatchObject({ field: "holdReason", required: true });
    const reopen = allowedMoves("COMPLETED", staff)[0]!;
    expect(reopen).toMatchObject({ action: "Reopen", note: { field: "reason", required: true } });
    const complete = allowedMoves("IN_PROGRESS", staff).find((m) => m.to === "COMPLETED")!;
    expect(complete.note).toMatchObject({ field: "completionNotes", required: false });
    const start = allowedMoves("OPEN", staff)[0]!;
    expect(start).toMatchObject({ action: "Start work", note: { required: false }, confirm: false });
  });

  it("asks before the moves that need words or cannot be undone", () => {
    const confirmed = (from: Parameters<typeof allowedMoves>[0]) =>
      allowedMoves(from, manager).filter((m) => m.confirm).map((m) => m.to);
    expect(confirmed("IN_PROGRESS")).toEqual(["ON_HOLD", "COMPLETED", "CANCELLED"]);
    expect(confirmed("COMPLETED")).toEqual(["IN_PROGRESS"]);
    expect(confirmed("ASSIGNED")).toEqual(["CANCELLED"]);
  });
});

describe("moveBody", () => {
  it("sends the typed text in the move's field, and nothing when blank", () => {
    const [hold] = allowedMoves("IN_PROGRESS", staff);
    expect(moveBody(hold!, "  waiting for a part ")).toEqual({ status: "ON_HOLD", holdReason: "waiting for a part" });
    const [start] = allowedMoves("OPEN", staff);
    expect(moveBody(start!, "   ")).toEqual({ status: "IN_PROGRESS" });
  });
});
