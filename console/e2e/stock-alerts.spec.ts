// Stock alerts: raised by worker-alerts from stock set up through the API,
// seen by severity, acknowledged and resolved in the console, checked
// through the API.
import type { APIRequestContext, Page } from "@playwright/test";
import { apiGet, apiSend, axeViolations, expect, signIn, test } from "./fixtures";

interface Alert {
  id: string;
  status: string;
  severity: string;
  type: string;
  createdAt: string;
  acknowledgedBy?: string | null;
  resolutionAction?: string | null;
  resolutionNotes?: string | null;
}

interface Stock {
  villa: string;
  /** Out of stock: a CRITICAL LOW_STOCK alert. */
  empty: { name: string; alert: Alert };
  /** Below its minimum: a WARNING LOW_STOCK alert. */
  low: { name: string; alert: Alert };
}

let runs = 0;

/**
 * A villa of its own with a store and two items under their minimum, as a
 * manager; waits for worker-alerts to raise their alerts (creating an item
 * enqueues its evaluation).
 */
async function stockWithAlerts(request: APIRequestContext): Promise<Stock> {
  const run = `${Date.now().toString(36)}${++runs}`;
  const villaName = `Alerts villa ${run}`;
  const villa = await apiSend<{ id: string }>(request, "manager", "POST", "/management/villas", {
    name: villaName,
    propertyType: "VILLA",
    villaStyle: "MODERN",
    bedrooms: 2,
    bathrooms: 1,
    maxGuests: 4,
  });
  const store = await apiSend<{ id: string }>(request, "manager", "POST", "/inventory/locations", {
    name: `Store ${run}`,
    type: "STORAGE",
    propertyId: villa.id,
  });
  const item = (name: string, sku: string, category: string, quantity: number) =>
    apiSend<{ id: string }>(request, "manager", "POST", "/inventory/items", {
      name,
      sku,
      category,
      unit: "EACH",
      propertyId: villa.id,
      locationId: store.id,
      quantity,
      minStock: 5,
    });
  const emptyName = `Hand soap ${run}`;
  const lowName = `Bath towel ${run}`;
  const empty = await item(emptyName, `SOAP-${run}`, "TOILETRIES", 0);
  const low = await item(lowName, `TOWEL-${run}`, "LINENS", 2);
  const raised = async (itemId: string) => {
    let found: Alert | undefined;
    await expect
      .poll(
        async () => {
          const page = await apiGet<{ data: Alert[] }>(
            request,
            "viewer",
            `/inventory/alerts?itemId=${itemId}&status=ACTIVE`,
          );
          found = page.data[0];
          return found?.type;
        },
        { message: "worker-alerts raises the alert", timeout: 30_000 },
      )
      .toBe("LOW_STOCK");
    return found!;
  };
  return {
    villa: villaName,
    empty: { name: emptyName, alert: await raised(empty.id) },
    low: { name: lowName, alert: await raised(low.id) },
  };
}

/** The screen, narrowed to the test's own villa (other tests leave alerts of their own). */
async function openAlertsOf(page: Page, villa: string) {
  await expect(page.getByRole("heading", { level: 1, name: "Stock alerts" })).toBeVisible();
  await page.getByLabel("Property").selectOption({ label: villa });
  await expect(page.getByRole("heading", { level: 2, name: "Open alerts" })).toBeVisible();
}

function card(page: Page, severity: "Critical" | "Warning", item: string) {
  return page.getByRole("region", { name: severity, exact: true }).getByRole("article", { name: item });
}

async function alertNow(request: APIRequestContext, id: string): Promise<Alert> {
  return apiGet<Alert>(request, "viewer", `/inventory/alerts/${id}`);
}

async function noHorizontalScroll(page: Page): Promise<void> {
  const widths = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    client: document.documentElement.clientWidth,
  }));
  expect(widths.scroll, "no horizontal scrolling").toBeLessThanOrEqual(widths.client);
}

test("staff acknowledge an alert and resolve it with the action taken", async ({ page, request }) => {
  const stock = await stockWithAlerts(request);
  await page.setViewportSize({ width: 375, height: 800 });
  await signIn(page, "staff", "/stock-alerts");
  await openAlertsOf(page, stock.villa);

  // Each alert under its severity, the most severe first, with its figures and when it was raised
  // in the company's time zone.
  const soap = card(page, "Critical", stock.empty.name);
  const towel = card(page, "Warning", stock.low.name);
  await expect(soap).toBeVisible();
  await expect(towel).toBeVisible();
  const severities = page.getByRole("region", { name: "Open alerts" }).getByRole("heading", { level: 3 });
  await expect(severities).toHaveText(["Critical", "Warning"]);
  await expect(soap).toContainText("0 (minimum 5)");
  await expect(towel).toContainText("2 (minimum 5)");
  const { businessTimeZone } = (await (await request.get("./config.json")).json()) as { businessTimeZone: string };
  const raised = new Intl.DateTimeFormat("en-GB", {
    dateStyle: "medium",
    timeStyle: "short",
    timeZone: businessTimeZone,
  });
  await expect(soap).toContainText(raised.format(new Date(stock.empty.alert.createdAt)));
  await expect(page.getByText(`(${businessTimeZone})`)).toBeVisible();
  await noHorizontalScroll(page);

  // Acknowledge: loading while the request runs (held until seen), then the alert reads acknowledged.
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.route("**/inventory/alerts/*/acknowledge", async (route) => {
    await held;
    await route.continue();
  });
  await soap.getByRole("button", { name: "Acknowledge" }).click();
  await expect(soap.getByRole("button", { name: "Acknowledging…" })).toBeDisabled();
  release();
  await expect(
    page.getByRole("status").filter({ hasText: `Acknowledged the alert on ${stock.empty.name}.` }),
  ).toBeVisible();
  await expect(soap.getByRole("button", { name: "Acknowledge" })).toHaveCount(0);
  await expect(soap).toContainText("Acknowledged");
  await expect(soap).toContainText("by dev-staff");
  const acknowledged = await alertNow(request, stock.empty.alert.id);
  expect(acknowledged.status).toBe("ACKNOWLEDGED");
  expect(acknowledged.acknowledgedBy).toBe("dev-staff");

  // Resolve with an action: the form offers the documented actions; axe and the phone width with it open.
  await soap.getByRole("button", { name: "Resolve" }).click();
  const form = page.getByRole("form", { name: `Resolve the alert on ${stock.empty.name}` });
  const action = form.getByLabel("Action taken");
  await expect(action).toBeFocused();
  await expect(action.locator("option")).toHaveText([
    "Choose the action taken…",
    "Restocked",
    "Reordered",
    "Stock count adjusted",
    "Replaced",
    "Disposed of",
    "Dismissed (nothing to do)",
    "Other (say what in the notes)",
  ]);
  expect(await axeViolations(page)).toEqual([]);
  await noHorizontalScroll(page);
  await action.selectOption({ label: "Restocked" });
  await form.getByLabel("Notes (optional)").fill("Ten bottles from the main store");
  await form.getByRole("button", { name: "Resolve alert" }).click();
  await expect(
    page.getByRole("status").filter({ hasText: `Resolved the alert on ${stock.empty.name}: Restocked.` }),
  ).toBeVisible();
  await expect(page.getByRole("article", { name: stock.empty.name })).toHaveCount(0);
  await expect(towel).toBeVisible();
  const resolved = await alertNow(request, stock.empty.alert.id);
  expect(resolved.status).toBe("RESOLVED");
  expect(resolved.resolutionAction).toBe("RESTOCKED");
  expect(resolved.resolutionNotes).toBe("Ten bottles from the main store");

  // It is among the resolved alerts, with its action.
  await page.getByLabel("Show").selectOption({ label: "Resolved alerts" });
  const done = page.getByRole("region", { name: "Resolved alerts" }).getByRole("article", { name: stock.empty.name });
  await expect(done).toContainText("Restocked");
  await expect(done).toContainText("Ten bottles from the main store");
  await expect(done.getByRole("button")).toHaveCount(0);
  expect(await axeViolations(page)).toEqual([]);
});

test("resolving an alert someone else resolved meanwhile shows the API's message", async ({ page, request }) => {
  const stock = await stockWithAlerts(request);
  await signIn(page, "staff", "/stock-alerts");
  await openAlertsOf(page, stock.villa);
  const towel = card(page, "Warning", stock.low.name);
  await towel.getByRole("button", { name: "Resolve" }).click();
  const form = page.getByRole("form", { name: `Resolve the alert on ${stock.low.name}` });
  await form.getByLabel("Action taken").selectOption({ label: "Reordered" });

  await apiSend(request, "manager", "POST", `/inventory/alerts/${stock.low.alert.id}/resolve`, { action: "DISMISSED" });
  await form.getByRole("button", { name: "Resolve alert" }).click();
  await expect(form.getByRole("alert")).toHaveText("the alert is already RESOLVED");
  const alert = await alertNow(request, stock.low.alert.id);
  expect(alert.resolutionAction).toBe("DISMISSED");
});

test("a viewer sees the alerts by severity without Acknowledge or Resolve", async ({ page, request }) => {
  const stock = await stockWithAlerts(request);
  await page.setViewportSize({ width: 375, height: 800 });
  await signIn(page, "viewer", "/stock-alerts");
  await openAlertsOf(page, stock.villa);
  await expect(card(page, "Critical", stock.empty.name)).toBeVisible();
  await expect(card(page, "Warning", stock.low.name)).toBeVisible();
  await expect(page.getByText("Your role can read the alerts but not handle them.")).toBeVisible();
  await expect(page.getByRole("button", { name: "Acknowledge" })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Resolve" })).toHaveCount(0);
  expect(await axeViolations(page)).toEqual([]);
  await noHorizontalScroll(page);
});
