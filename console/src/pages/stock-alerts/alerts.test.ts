import { describe, expect, it } from "vitest";
import {
  alertFigure,
  allPages,
  groupBySeverity,
  humanize,
  RESOLUTION_ACTIONS,
  resolutionLabel,
  type Alert,
  type PageOf,
} from "./alerts";

function alert(id: string, severity: string, status: string, createdAt: string, extra: Partial<Alert> = {}): Alert {
  return {
    id,
    severity,
    status,
    createdAt,
    updatedAt: createdAt,
    type: "LOW_STOCK",
    message: `alert ${id}`,
    currentQuantity: 2,
    threshold: 5,
    itemId: `item-${id}`,
    item: { id: `item-${id}`, name: `Item ${id}`, sku: `SKU-${id}` },
    locationId: "loc",
    location: { id: "loc", name: "Store" },
    propertyId: "villa",
    property: { id: "villa", name: "Villa" },
    ...extra,
  };
}

describe("groupBySeverity", () => {
  it("puts each run of one severity under one heading, in the API's order", () => {
    // A page of GET /inventory/alerts?status=OPEN&sort=SEVERITY: critical first, newest first within.
    const page = [
      alert("c2", "CRITICAL", "ACTIVE", "2030-01-02T00:00:00Z"),
      alert("c1", "CRITICAL", "ACKNOWLEDGED", "2030-01-01T00:00:00Z"),
      alert("w3", "WARNING", "ACTIVE", "2030-01-03T00:00:00Z"),
      alert("w1", "WARNING", "ACKNOWLEDGED", "2030-01-01T00:00:00Z"),
    ];
    expect(groupBySeverity(page).map((g) => [g.severity, g.alerts.map((a) => a.id)])).toEqual([
      ["CRITICAL", ["c2", "c1"]],
      ["WARNING", ["w3", "w1"]],
    ]);
    // A page that starts in the middle of a severity has one group for it.
    expect(groupBySeverity(page.slice(3)).map((g) => g.severity)).toEqual(["WARNING"]);
    expect(groupBySeverity([])).toEqual([]);
  });
});

describe("words", () => {
  it("turns the API's codes into words", () => {
    expect(humanize("LOW_STOCK")).toBe("Low stock");
    expect(humanize("CRITICAL")).toBe("Critical");
    expect(humanize("ACKNOWLEDGED")).toBe("Acknowledged");
  });

  it("offers every documented action, and names the platform's own", () => {
    expect(RESOLUTION_ACTIONS).toEqual([
      "RESTOCKED",
      "REORDERED",
      "ADJUSTED",
      "REPLACED",
      "DISPOSED",
      "DISMISSED",
      "OTHER",
    ]);
    expect(resolutionLabel("RESTOCKED")).toBe("Restocked");
    expect(resolutionLabel("AUTO_RESOLVED")).toMatch(/automatically/);
    expect(resolutionLabel("SOMETHING_NEW")).toBe("Something new");
    expect(resolutionLabel(null)).toBe("—");
  });
});

describe("alertFigure", () => {
  it("reads stock against its minimum", () => {
    expect(
      alertFigure(alert("1", "WARNING", "ACTIVE", "2030-01-01T00:00:00Z", { currentQuantity: 2.5 }), "en-GB"),
    ).toEqual({
      label: "In stock",
      value: "2.5 (minimum 5)",
    });
    expect(
      alertFigure(
        alert("1", "CRITICAL", "ACTIVE", "2030-01-01T00:00:00Z", { currentQuantity: 0, threshold: null }),
        "en-GB",
      ),
    ).toEqual({ label: "In stock", value: "0" });
  });

  it("reads a condition and an expiry day (a calendar date, not shifted by any zone)", () => {
    const damaged = alert("1", "WARNING", "ACTIVE", "2030-01-01T00:00:00Z", {
      type: "CONDITION",
      condition: "DAMAGED",
    });
    expect(alertFigure(damaged, "en-GB")).toEqual({ label: "Condition", value: "Damaged" });
    const expiring = alert("1", "WARNING", "ACTIVE", "2030-01-01T00:00:00Z", {
      type: "EXPIRY",
      expiryDate: "2030-02-01",
    });
    expect(alertFigure(expiring, "en-GB")).toEqual({ label: "Expires", value: "1 Feb 2030" });
  });
});

describe("paging", () => {
  it("reads every page until the total, and stops at the cap", async () => {
    const records = Array.from({ length: 7 }, (_, i) => i);
    const asked: number[] = [];
    const fetchPage = async (page: number): Promise<PageOf<number>> => {
      asked.push(page);
      return { data: records.slice((page - 1) * 3, page * 3), pagination: { page, limit: 3, total: records.length } };
    };
    expect(await allPages(fetchPage, 10)).toEqual({ items: records, total: 7 });
    expect(asked).toEqual([1, 2, 3]);
    asked.length = 0;
    expect(await allPages(fetchPage, 2)).toEqual({ items: [0, 1, 2, 3, 4, 5], total: 7 });
    expect(asked).toEqual([1, 2]);
  });

  it("stops on an empty page even when the total says more (records left meanwhile)", async () => {
    const fetchPage = async (page: number): Promise<PageOf<number>> => ({
      data: page === 1 ? [1, 2] : [],
      pagination: { page, limit: 2, total: 5 },
    });
    expect(await allPages(fetchPage, 10)).toEqual({ items: [1, 2], total: 5 });
  });
});
