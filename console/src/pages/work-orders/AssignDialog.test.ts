import { describe, expect, it } from "vitest";
import { staffChoices } from "./AssignDialog";

const member = (id: string, name: string, villaIds: string[] = [], isActive = true) => ({
  id,
  name,
  firstName: name,
  defaultRole: "HOUSEKEEPER",
  isActive,
  createdAt: "2030-01-01T00:00:00Z",
  updatedAt: "2030-01-01T00:00:00Z",
  assignments: villaIds.map((villaId) => ({ villaId, villaName: "V", role: "HOUSEKEEPER", isPrimary: false })),
});

describe("staffChoices", () => {
  it("offers the villa's team first, then the others, each by name, active staff only", () => {
    const { team, others } = staffChoices(
      [
        member("1", "zara", ["v1"]),
        member("2", "Budi"),
        member("3", "Ayu", ["v1"]),
        member("4", "Agus", [], false),
        member("5", "Citra", ["v2"]),
      ],
      "v1",
      "en",
    );
    expect(team.map((s) => s.name)).toEqual(["Ayu", "zara"]);
    expect(others.map((s) => s.name)).toEqual(["Budi", "Citra"]);
  });
});
