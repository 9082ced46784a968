import { describe, expect, it } from "vitest";
import { makeSession, type ConsoleConfig, type Me } from "./session";

const config: ConsoleConfig = { signIn: "development", oidc: null, businessTimeZone: "Asia/Makassar", rolesClaim: "roles" };

/** A staff member as GET /me answers: maintenance read and write, nothing to manage. */
const staff: Me = {
  subject: "dev-staff",
  roles: ["staff"],
  operations: ["GET /maintenance/work-orders", "PATCH /maintenance/work-orders/{id}"],
  permissions: {
    villas: ["read"],
    onboarding: [],
    maintenance: ["read", "write"],
    inventory: ["read", "write"],
    reporting: ["read"],
    platform: [],
  },
};

describe("session", () => {
  const session = makeSession(config, staff, () => {});

  it("may: the operations GET /me lists, method and described path", () => {
    expect(session.may("PATCH", "/maintenance/work-orders/{id}")).toBe(true);
    expect(session.may("POST", "/maintenance/task-rules")).toBe(false);
  });

  it("grants: the access GET /me lists for the area, and nothing else", () => {
    expect(session.grants("maintenance", "write")).toBe(true);
    expect(session.grants("maintenance", "manage")).toBe(false);
    expect(session.grants("platform", "read")).toBe(false);
    const manager = makeSession(
      config,
      { ...staff, roles: ["manager"], permissions: { ...staff.permissions, maintenance: ["read", "write", "delete", "manage"] } },
      () => {},
    );
    expect(manager.grants("maintenance", "manage")).toBe(true);
  });
});
