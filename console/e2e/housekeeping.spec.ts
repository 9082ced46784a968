// The housekeeping board against the real platform and its fake PMS: a villa
// linked to a PMS listing, a checkout-cleaning task rule with a checklist,
// and two stays where one leaves the day the next arrives (made on the fake,
// which posts Hostaway's webhook; the platform generates the work orders).
// The board shows the villa's row with that day marked a same-day turnover
// and the work order in its cell; assigning it from the board shows the
// assignee, and the API agrees.
import { mkdirSync } from "node:fs";
import type { APIRequestContext } from "@playwright/test";
import { apiGet, apiSend, axeViolations, expect, signIn, test } from "./fixtures";
import { addDays, cancelFakeStay, companyToday, fakeStay, unlinkListing, villaOnListing } from "./setup";

/** The fake's listing this spec links to its villa (work-orders.spec.ts uses 40034). */
const LISTING_PMS_ID = 40033;

interface BoardEntry {
  date: string;
  villa: { id: string; name: string };
  sameDayTurnover: boolean;
  checkouts: { guestName: string | null }[];
  checkins: { guestName: string | null }[];
  workOrders: { id: string; title: string; status: string; taskRuleId: string | null; assignee: { id: string; name: string } | null }[];
}

/** A booking on the fake's listing of this spec. */
function stay(request: APIRequestContext, arrivalDate: string, departureDate: string, guestName: string) {
  return fakeStay(request, { listingMapId: LISTING_PMS_ID, arrivalDate, departureDate, guestName, status: "new" });
}

/**
 * Unlinks the listing and cancels the spec's bookings: their open work orders
 * are cancelled with them, and later runs on the same listing and days start
 * clean. (The rule stays: it names only this villa, which no longer has a
 * listing, so it makes nothing more.)
 */
async function cleanUp(request: APIRequestContext, s: Seeded) {
  await unlinkListing(request, s.listingId);
  for (const id of s.stays) await cancelFakeStay(request, id);
}

interface Seeded {
  villa: { id: string; name: string };
  staff: { id: string; name: string };
  rule: { id: string; name: string };
  day: string;
  from: string;
  to: string;
  /** The platform's id of the fake's listing, linked to the villa. */
  listingId: string;
  /** The fake's ids of the two bookings. */
  stays: number[];
}

let seeded: Seeded | undefined;

test.afterAll(async ({ playwright }) => {
  if (!seeded) return;
  const request = await playwright.request.newContext();
  await cleanUp(request, seeded);
  seeded = undefined;
  await request.dispose();
});

/**
 * Once per run: a villa on the fake's listing, a staff member, a rule, and a
 * same-day turnover 10 days ahead whose work order the platform has generated.
 */
async function seed(request: APIRequestContext): Promise<Seeded & { order: BoardEntry["workOrders"][number] }> {
  if (seeded) return { ...seeded, order: await generated(request, seeded) };
  const stamp = Date.now().toString(36).slice(-5);
  const { villa, listingId } = await villaOnListing(request, LISTING_PMS_ID, {
    name: `Villa Seroja ${stamp}`,
    bedrooms: 3,
    bathrooms: 3,
    maxGuests: 6,
  });

  const staff = await apiSend<{ id: string; name: string }>(request, "manager", "POST", "/management/staff", {
    firstName: "Made",
    lastName: `Wirawan ${stamp}`,
    defaultRole: "HOUSEKEEPER",
  });
  const rule = await apiSend<{ id: string; name: string }>(request, "manager", "POST", "/maintenance/task-rules", {
    name: `Checkout clean ${stamp}`,
    trigger: "CHECKOUT",
    category: "CLEANING",
    villaIds: [villa.id],
    checklist: [
      { text: "Linen changed", kind: "CHECK", failCategory: "CLEANING" },
      { text: "Pool clear (photo)", kind: "PHOTO_REQUIRED", failCategory: "POOL" },
    ],
  });

  const day = addDays(await companyToday(request), 10);
  const stays = [
    await stay(request, addDays(day, -3), day, "Ada Departing"),
    await stay(request, day, addDays(day, 4), "Bob Arriving"),
  ];
  seeded = { villa, staff, rule, day, from: addDays(day, -3), to: addDays(day, 3), listingId, stays };
  return { ...seeded, order: await generated(request, seeded) };
}

/** The rule's work order in the turnover day's cell, once the webhook and the generation have run. */
async function generated(request: APIRequestContext, s: Seeded) {
  await expect
    .poll(async () => {
      const cell = await boardCell(request, s);
      return Boolean(cell?.sameDayTurnover && cell.workOrders.some((w) => w.taskRuleId === s.rule.id));
    }, { timeout: 30_000 })
    .toBe(true);
  return (await boardCell(request, s))!.workOrders.find((w) => w.taskRuleId === s.rule.id)!;
}

async function boardCell(request: APIRequestContext, s: Seeded): Promise<BoardEntry | undefined> {
  const board = await apiGet<{ data: BoardEntry[] }>(
    request,
    "viewer",
    `/maintenance/turnovers?from=${s.day}&to=${s.day}&villaId=${s.villa.id}`,
  );
  return board.data.find((e) => e.date === s.day);
}

test("the board shows a same-day turnover with its work order, and assigns it", async ({ page, request }) => {
  const s = await seed(request);
  const order = s.order;

  await page.setViewportSize({ width: 1280, height: 900 });
  await signIn(page, "manager", "/housekeeping");
  await expect(page.getByRole("heading", { level: 1, name: "Housekeeping" })).toBeVisible();

  // The day range picker puts the range in the URL.
  await page.getByLabel("From", { exact: true }).fill(s.from);
  await page.getByLabel("To", { exact: true }).fill(s.to);
  await page.getByRole("button", { name: "Show days" }).click();
  await expect(page).toHaveURL(new RegExp(`from=${s.from}&to=${s.to}`));

  const board = page.getByRole("region", { name: /^Turnovers from/ });
  await expect(board).toBeVisible();
  // Days across: the villa column, then seven days.
  await expect(board.getByRole("columnheader")).toHaveCount(8);
  const row = board.getByRole("row").filter({ has: page.getByRole("rowheader", { name: s.villa.name, exact: true }) });
  await expect(row).toHaveCount(1);
  // The turnover day is the fourth of the seven.
  const cell = row.getByRole("cell").nth(3);
  await expect(cell).toContainText("Same-day turnover");
  await expect(cell).toContainText("Checkout Ada Departing");
  await expect(cell).toContainText("Check-in Bob Arriving");
  // The work order's entry (other stays on the listing may have theirs in the cell too).
  const item = cell.getByRole("listitem").filter({ has: page.locator(`a[href$="/work-orders/${order.id}"]`) });
  await expect(item).toHaveCount(1);
  await expect(item).toContainText("Open");
  await expect(item).toContainText("Unassigned");
  // The days around it: the stay's check-in three days before, its checkout on none other.
  await expect(row.getByRole("cell").nth(0)).toContainText("Check-in Ada Departing");
  expect(await axeViolations(page)).toEqual([]);

  // Assign it from the board.
  await item.getByRole("button", { name: /^Assign/ }).click();
  const dialog = page.getByRole("dialog", { name: "Assign work order" });
  await expect(dialog).toBeVisible();
  await expect(dialog).toContainText(s.rule.name);
  await dialog.getByLabel("Staff member").selectOption({ label: s.staff.name });
  expect(await axeViolations(page)).toEqual([]);
  await dialog.getByRole("button", { name: "Assign", exact: true }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByRole("status").filter({ hasText: `assigned to ${s.staff.name}` })).toBeVisible();
  await expect(item).toContainText(s.staff.name);
  await expect(item).toContainText("Assigned");

  const detail = await apiGet<{ status: string; assignee: { id: string; type: string } | null }>(
    request,
    "viewer",
    `/maintenance/work-orders/${order.id}`,
  );
  expect(detail.status).toBe("ASSIGNED");
  expect(detail.assignee).toMatchObject({ id: s.staff.id, type: "TECHNICIAN" });

  // The README's picture of the board.
  mkdirSync("../docs/images", { recursive: true });
  await page.getByRole("heading", { level: 1 }).scrollIntoViewIfNeeded();
  await page.screenshot({ path: "../docs/images/console-housekeeping.png" });

  // The work order's link leads to its page.
  await item.getByRole("link").click();
  await expect(page.getByRole("heading", { level: 1, name: s.rule.name })).toBeVisible();
  await expect(page).toHaveURL(new RegExp(`/work-orders/${order.id}$`));
});

test("a viewer reads the board without assigning, and a phone scrolls only the board", async ({ page, request }) => {
  const s = await seed(request);
  const to = addDays(s.from, 13);
  await page.setViewportSize({ width: 375, height: 800 });
  await signIn(page, "viewer", `/housekeeping?from=${s.from}&to=${to}`);
  await expect(page.getByRole("heading", { level: 1, name: "Housekeeping" })).toBeVisible();
  const board = page.getByRole("region", { name: /^Turnovers from/ });
  await expect(board.getByRole("columnheader")).toHaveCount(15);
  const row = board.getByRole("row").filter({ has: page.getByRole("rowheader", { name: s.villa.name, exact: true }) });
  await expect(row.getByRole("cell").nth(3)).toContainText("Same-day turnover");
  await expect(row.locator(`a[href$="/work-orders/${s.order.id}"]`)).toBeVisible();
  // Read only: nothing to assign.
  await expect(page.getByRole("button", { name: /^(Assign|Reassign)/ })).toHaveCount(0);
  expect(await axeViolations(page)).toEqual([]);

  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow, "the page scrolls sideways at 375 px").toBeLessThanOrEqual(0);
  // Two weeks do not fit 375 px: the board scrolls inside its own region, which the keyboard reaches.
  expect(await board.evaluate((el) => el.scrollWidth > el.clientWidth && getComputedStyle(el).overflowX === "auto")).toBe(true);
  await expect(board).toHaveAttribute("tabindex", "0");

  // A range the API refuses is explained, not sent.
  await page.getByLabel("From", { exact: true }).fill(s.from);
  await page.getByLabel("To", { exact: true }).fill(addDays(s.from, -1));
  await page.getByRole("button", { name: "Show days" }).click();
  await expect(page.getByRole("alert")).toContainText("before the first day");
});
