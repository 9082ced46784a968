// The work-order screens against the real platform: a turnover work order
// with a checklist (a photo item and a pass/fail item) made by a task rule
// from a stay on the fake PMS; staff filter the list (the URL follows, the
// rows are the API's; due days are the company's), answer the checklist (the photo uploaded from the
// "camera" input as a field note; a failed item opens a follow-up) and move
// the status (a hold needs a reason); a viewer is offered no writes.
import type { APIRequestContext, Page } from "@playwright/test";
import { apiGet, apiOrigin, apiSend, axeViolations, expect, signIn, test, tokenFor } from "./fixtures";
import { addDays, businessTimeZone, cancelFakeStay, companyToday, fakeStay, png, unlinkListing, villaOnListing } from "./setup";

/** The fake's listing this spec links to its villa (housekeeping.spec.ts uses 40033). */
const LISTING_PMS_ID = 40034;

const PHOTO_ITEM = "Pool water clear (photo)";
const CHECK_ITEM = "Safe reset and locked";

interface Detail {
  id: string;
  title: string;
  status: string;
  holdReason: string | null;
  checklist: { id: string; text: string; kind: string; result: string | null; fieldNoteId: string | null; followUpWorkOrderId: string | null }[];
  followUps: { id: string; title: string; status: string }[];
  history: { from: string | null; to: string; reason: string | null }[];
}

/** The instant of `time` on `day` in `timeZone`, as RFC 3339 with the zone's offset ("+08:00"). */
function zonedTime(day: string, time: string, timeZone: string): string {
  const noon = new Date(`${day}T12:00:00Z`);
  const name = new Intl.DateTimeFormat("en-US", { timeZone, timeZoneName: "longOffset" })
    .formatToParts(noon)
    .find((p) => p.type === "timeZoneName")!.value;
  const offset = name === "GMT" ? "+00:00" : name.slice(3);
  return `${day}T${time}:00${offset}`;
}

interface Seeded {
  villa: { id: string; name: string };
  rule: { id: string; name: string };
  order: { id: string; title: string };
  /** The platform's id of the fake's listing, linked to the villa. */
  listingId: string;
  /** The fake's id of the booking. */
  stay: number;
}

let seeded: Seeded | undefined;
/** Work orders the due-day test made by hand: cancelled afterwards with the rest. */
const madeByHand: string[] = [];

// Afterwards the listing is unlinked and the booking cancelled (the open work orders of the
// listing's stays are cancelled with them), and the follow-ups cancelled, so that later runs on
// the same listing start clean. The rule names only this villa: it makes nothing more.
test.afterAll(async ({ playwright }) => {
  if (!seeded) return;
  const request = await playwright.request.newContext();
  const s = seeded;
  seeded = undefined;
  await unlinkListing(request, s.listingId);
  await cancelFakeStay(request, s.stay);
  const followUps = await apiGet<{ data: { id: string; status: string }[] }>(
    request,
    "manager",
    `/maintenance/work-orders?villaId=${s.villa.id}&source=INSPECTION&limit=100`,
  );
  for (const f of followUps.data.filter((w) => w.status !== "CANCELLED" && w.status !== "COMPLETED")) {
    await apiSend(request, "manager", "PATCH", `/maintenance/work-orders/${f.id}`, { status: "CANCELLED", reason: "browser test clean-up" });
  }
  for (const id of madeByHand.splice(0)) {
    await apiSend(request, "manager", "PATCH", `/maintenance/work-orders/${id}`, { status: "CANCELLED", reason: "browser test clean-up" });
  }
  await request.dispose();
});

/** Once per run: a villa on the fake's listing, a rule with a checklist, a stay, its work order. */
async function seed(request: APIRequestContext): Promise<Seeded> {
  if (seeded) return seeded;
  const stamp = Date.now().toString(36).slice(-5);
  const { villa, listingId } = await villaOnListing(request, LISTING_PMS_ID, {
    name: `Villa Kenanga ${stamp}`,
    bedrooms: 2,
    bathrooms: 2,
    maxGuests: 4,
  });
  const rule = await apiSend<{ id: string; name: string }>(request, "manager", "POST", "/maintenance/task-rules", {
    name: `Turnover inspection ${stamp}`,
    trigger: "CHECKOUT",
    category: "INSPECTION",
    villaIds: [villa.id],
    checklist: [
      { text: PHOTO_ITEM, kind: "PHOTO_REQUIRED", failCategory: "POOL" },
      { text: CHECK_ITEM, kind: "CHECK", failCategory: "SECURITY" },
    ],
  });
  const departure = addDays(await companyToday(request), 6);
  const stayId = await fakeStay(request, {
    listingMapId: LISTING_PMS_ID,
    arrivalDate: addDays(departure, -2),
    departureDate: departure,
    guestName: "Citra Guest",
  });

  // The webhook and the generation it enqueues take a few seconds.
  const path = `/maintenance/work-orders?villaId=${villa.id}&taskRuleId=${rule.id}&limit=100`;
  let order: { id: string; title: string } | undefined;
  await expect
    .poll(async () => {
      const list = await apiGet<{ data: { id: string; title: string; dueDate: string | null }[] }>(request, "viewer", path);
      order = list.data.find((w) => w.dueDate?.startsWith(departure));
      return Boolean(order);
    }, { timeout: 30_000 })
    .toBe(true);
  seeded = { villa, rule, order: order!, listingId, stay: stayId };
  return seeded;
}

async function noSideways(page: Page) {
  await page.setViewportSize({ width: 375, height: 800 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow, "the page scrolls sideways at 375 px").toBeLessThanOrEqual(0);
  await page.setViewportSize({ width: 1280, height: 900 });
}

/** The work-order ids the table lists, in order. */
async function listedIds(page: Page): Promise<string[]> {
  const hrefs = await page.locator("table.work-orders tbody tr td:first-child a").evaluateAll((links) =>
    links.map((a) => a.getAttribute("href") ?? ""),
  );
  return hrefs.map((h) => h.split("/").pop()!);
}

test("staff filter the list: the URL follows and the rows are the API's", async ({ page, request }) => {
  const s = await seed(request);
  await page.setViewportSize({ width: 1280, height: 900 });
  await signIn(page, "staff", "/work-orders");
  await expect(page.getByRole("heading", { level: 1, name: "Work orders" })).toBeVisible();
  await expect(page.getByRole("status").filter({ hasText: /work orders?, page 1 of/ })).toBeVisible();
  expect(await axeViolations(page)).toEqual([]);

  await page.getByLabel("Status").selectOption({ label: "Open" });
  await expect(page).toHaveURL(/\?status=OPEN$/);
  await page.getByLabel("Villa").selectOption({ label: s.villa.name });
  await expect(page).toHaveURL(new RegExp(`\\?status=OPEN&villaId=${s.villa.id}$`));

  const api = await apiGet<{ data: { id: string }[]; pagination: { total: number } }>(
    request,
    "staff",
    `/maintenance/work-orders?status=OPEN&villaId=${s.villa.id}&page=1&limit=20`,
  );
  expect(api.data.map((w) => w.id)).toContain(s.order.id);
  await expect(page.getByRole("status").filter({ hasText: `${api.pagination.total} work order` })).toBeVisible();
  await expect.poll(() => listedIds(page)).toEqual(api.data.map((w) => w.id));

  // Source narrows further, and Back undoes it.
  await page.getByLabel("Source").selectOption({ label: "Inspection follow-up" });
  await expect(page).toHaveURL(/&source=INSPECTION$/);
  await page.goBack();
  await expect(page).toHaveURL(new RegExp(`\\?status=OPEN&villaId=${s.villa.id}$`));
  await expect(page.getByLabel("Source")).toHaveValue("");
  await expect.poll(() => listedIds(page)).toEqual(api.data.map((w) => w.id));
  await noSideways(page);

  // A reload keeps the filters (they are the URL's).
  await page.reload();
  await expect(page.getByLabel("Villa")).toHaveValue(s.villa.id);
  await expect.poll(() => listedIds(page)).toEqual(api.data.map((w) => w.id));
});

test("staff filter by due day: the company's days, the rows are the API's, a backwards range is the API's error", async ({
  page,
  request,
}) => {
  const s = await seed(request);
  const zone = await businessTimeZone(request);
  // Three work orders of the test's own villa: late on one company day, early on the next, none due.
  const day = addDays(await companyToday(request), 20);
  const next = addDays(day, 1);
  const stamp = Date.now().toString(36).slice(-5);
  const make = async (title: string, dueDate: string | null) => {
    const made = await apiSend<{ id: string }>(request, "staff", "POST", "/maintenance/work-orders", {
      title: `${title} ${stamp}`,
      villaId: s.villa.id,
      category: "PLUMBING",
      priority: "LOW",
      dueDate,
    });
    madeByHand.push(made.id);
    return made.id;
  };
  const late = await make("Tap drips (due late)", zonedTime(day, "23:30", zone));
  const early = await make("Shower drains slowly (due early)", zonedTime(next, "00:30", zone));
  const undated = await make("Hose reel (no due date)", null);

  await page.setViewportSize({ width: 1280, height: 900 });
  await signIn(page, "staff", `/work-orders?villaId=${s.villa.id}`);
  await expect.poll(() => listedIds(page)).toContain(undated);
  await page.getByLabel("Due from").fill(next);
  await expect(page).toHaveURL(new RegExp(`\\?villaId=${s.villa.id}&dueFrom=${next}$`));
  await page.getByLabel("Due to").fill(next);
  await expect(page).toHaveURL(new RegExp(`\\?villaId=${s.villa.id}&dueFrom=${next}&dueTo=${next}$`));

  const api = await apiGet<{ data: { id: string }[]; pagination: { total: number } }>(
    request,
    "staff",
    `/maintenance/work-orders?villaId=${s.villa.id}&dueFrom=${next}&dueTo=${next}&page=1&limit=20`,
  );
  // The API counts the day in the company's zone: 00:30 on it is in, 23:30 the day before is not.
  expect(api.data.map((w) => w.id)).toEqual([early]);
  await expect(page.getByRole("status").filter({ hasText: `${api.pagination.total} work order, page 1 of 1.` })).toBeVisible();
  await expect.poll(() => listedIds(page)).toEqual(api.data.map((w) => w.id));
  await expect(page.getByRole("link", { name: `Shower drains slowly (due early) ${stamp}` })).toBeVisible();
  expect(await axeViolations(page)).toEqual([]);
  await noSideways(page);

  // Widening to the day before brings the late one in, as the API answers.
  await page.getByLabel("Due from").fill(day);
  const both = await apiGet<{ data: { id: string }[] }>(
    request,
    "staff",
    `/maintenance/work-orders?villaId=${s.villa.id}&dueFrom=${day}&dueTo=${next}&page=1&limit=20`,
  );
  expect(new Set(both.data.map((w) => w.id))).toEqual(new Set([late, early]));
  await expect.poll(() => listedIds(page)).toEqual(both.data.map((w) => w.id));

  // A range that ends before it starts: the API's own message, naming dueTo.
  const backwards = `/maintenance/work-orders?villaId=${s.villa.id}&dueFrom=${addDays(next, 1)}&dueTo=${next}`;
  const refused = await request.get(`${apiOrigin()}${backwards}`, {
    headers: { authorization: `Bearer ${await tokenFor(request, "staff")}` },
  });
  expect(refused.status()).toBe(400);
  const { error } = (await refused.json()) as { error: { message: string } };
  expect(error.message).toContain("dueTo");
  await page.getByLabel("Due from").fill(addDays(next, 1));
  await expect(page.getByRole("alert")).toContainText(error.message);
  await expect(page.locator("table.work-orders")).toHaveCount(0);

  // Clear filters empties the URL's query and both days.
  await page.getByRole("button", { name: "Clear filters" }).click();
  await expect(page).toHaveURL(/\/work-orders$/);
  await expect(page.getByLabel("Due from")).toHaveValue("");
  await expect(page.getByLabel("Due to")).toHaveValue("");
});

test("staff answer the checklist with a photo, see the follow-up, and move the status", async ({ page, request }) => {
  const s = await seed(request);
  await page.setViewportSize({ width: 1280, height: 900 });
  await signIn(page, "staff", `/work-orders?villaId=${s.villa.id}`);
  await page.locator(`a[href$="/work-orders/${s.order.id}"]`).click();
  await expect(page.getByRole("heading", { level: 1, name: s.order.title })).toBeVisible();
  await expect(page.getByText("0 of 2 answered.")).toBeVisible();
  expect(await axeViolations(page)).toEqual([]);

  // The photo item: Pass waits for a photo, taken with the camera input.
  const photoItem = page.getByRole("listitem", { name: PHOTO_ITEM });
  await expect(photoItem.getByRole("button", { name: "Pass" })).toBeDisabled();
  const camera = photoItem.getByLabel("Take or choose a photo");
  await expect(camera).toHaveAttribute("accept", "image/*");
  await expect(camera).toHaveAttribute("capture", "environment");
  await camera.setInputFiles({ name: "pool.png", mimeType: "image/png", buffer: png() });
  await expect(photoItem.getByRole("status")).toHaveText("Photo recorded.");
  // The field note is listed with the work order's photos.
  const notes = page.getByRole("region", { name: "Photos and notes" });
  await expect(notes.getByText(/^Photo by dev-staff/)).toBeVisible();
  await expect(notes.getByRole("img")).toHaveCount(1);
  await photoItem.getByRole("button", { name: "Pass" }).click();
  await expect(photoItem.getByText(/^Pass — dev-staff/)).toBeVisible();
  await expect(photoItem.getByRole("img", { name: `Photo for “${PHOTO_ITEM}”` })).toBeVisible();

  // The check item fails: the API opens a follow-up, shown on the page.
  const checkItem = page.getByRole("listitem", { name: CHECK_ITEM });
  await checkItem.getByLabel("Notes").fill("The safe door sticks");
  await checkItem.getByRole("button", { name: "Fail" }).click();
  await expect(checkItem.getByText(/^Fail — dev-staff/)).toBeVisible();
  const followUps = page.getByRole("region", { name: "Follow-ups" });
  await expect(followUps.getByRole("link", { name: CHECK_ITEM })).toBeVisible();
  await expect(checkItem.getByRole("link", { name: "the repair this failure opened" })).toBeVisible();
  await expect(page.getByText("2 of 2 answered.")).toBeVisible();

  const answered = await apiGet<Detail>(request, "viewer", `/maintenance/work-orders/${s.order.id}`);
  const photo = answered.checklist.find((i) => i.text === PHOTO_ITEM)!;
  expect(photo).toMatchObject({ result: "PASS", kind: "PHOTO_REQUIRED" });
  expect(photo.fieldNoteId).toBeTruthy();
  const photoNotes = await apiGet<{ data: { id: string; type: string }[] }>(
    request,
    "viewer",
    `/maintenance/field-notes?workOrderId=${s.order.id}`,
  );
  expect(photoNotes.data).toContainEqual(expect.objectContaining({ id: photo.fieldNoteId, type: "PHOTO" }));
  expect(answered.followUps).toEqual([expect.objectContaining({ title: CHECK_ITEM, status: "OPEN" })]);

  // Status moves: staff may start and hold it, but not cancel it (managers do).
  const moves = page.getByRole("group", { name: "Change the status" });
  await expect(moves.getByRole("button")).toHaveText(["Start work"]);
  await moves.getByRole("button", { name: "Start work" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Status changed: In progress." })).toBeVisible();
  await expect(moves.getByRole("button")).toHaveText(["Put on hold", "Complete"]);
  await moves.getByRole("button", { name: "Put on hold" }).click();
  const form = page.getByRole("form", { name: /^Put on hold/ });
  const confirm = form.getByRole("button", { name: "Confirm: put on hold" });
  await expect(confirm).toBeDisabled();
  await form.getByLabel("Why is it on hold? (required)").fill("Waiting for the locksmith");
  expect(await axeViolations(page)).toEqual([]);
  await confirm.click();
  await expect(page.getByRole("status").filter({ hasText: "Status changed: On hold." })).toBeVisible();
  await expect(page.getByRole("region", { name: "History" })).toContainText("In progress → On hold, by dev-staff");
  await expect(page.getByRole("region", { name: "History" })).toContainText("“Waiting for the locksmith”");

  const held = await apiGet<Detail>(request, "viewer", `/maintenance/work-orders/${s.order.id}`);
  expect(held).toMatchObject({ status: "ON_HOLD", holdReason: "Waiting for the locksmith" });
  expect(held.history.at(-1)).toMatchObject({ from: "IN_PROGRESS", to: "ON_HOLD", reason: "Waiting for the locksmith" });
  await noSideways(page);

  // The follow-up's page leads back to the inspection.
  await followUps.getByRole("link", { name: CHECK_ITEM }).click();
  await expect(page.getByRole("heading", { level: 1, name: CHECK_ITEM })).toBeVisible();
  await expect(page.getByText("Inspection follow-up")).toBeVisible();
  await expect(page.getByRole("link", { name: "the inspection whose checklist item failed" })).toBeVisible();
});

test("Cancel work order is offered to managers, not to staff (the maintenance manage permission)", async ({ page, request }) => {
  const s = await seed(request);
  // A work order of its own, OPEN, so that cancelling is a move the API allows whatever ran before.
  const title = `Cancel check ${Date.now().toString(36)}`;
  const order = await apiSend<{ id: string }>(request, "manager", "POST", "/maintenance/work-orders", {
    title,
    villaId: s.villa.id,
    category: "OTHER",
    priority: "LOW",
  });
  madeByHand.push(order.id);
  await page.setViewportSize({ width: 1280, height: 900 });
  for (const [role, offered] of [["manager", 1], ["staff", 0]] as const) {
    const me = await apiGet<{ permissions: { maintenance: string[] } }>(request, role, "/me");
    expect(me.permissions.maintenance.includes("manage")).toBe(offered === 1);
    await signIn(page, role, `/work-orders/${order.id}`);
    await expect(page.getByRole("heading", { level: 1, name: title })).toBeVisible();
    const moves = page.getByRole("group", { name: "Change the status" });
    await expect(moves.getByRole("button", { name: "Start work" })).toBeVisible();
    await expect(moves.getByRole("button", { name: "Cancel work order" })).toHaveCount(offered);
    await page.getByRole("button", { name: "Sign out" }).click();
  }
});

test("a viewer reads the list and a work order but is offered no writes", async ({ page, request }) => {
  const s = await seed(request);
  await page.setViewportSize({ width: 1280, height: 900 });
  await signIn(page, "viewer", `/work-orders?villaId=${s.villa.id}`);
  await expect(page.getByRole("heading", { level: 1, name: "Work orders" })).toBeVisible();
  await expect.poll(() => listedIds(page)).toContain(s.order.id);
  expect(await axeViolations(page)).toEqual([]);
  await noSideways(page);

  await page.locator(`a[href$="/work-orders/${s.order.id}"]`).click();
  await expect(page.getByRole("heading", { level: 1, name: s.order.title })).toBeVisible();
  await expect(page.getByRole("region", { name: "Checklist" })).toBeVisible();
  await expect(page.getByRole("region", { name: "History" })).toBeVisible();
  // Nothing to press but the sign-out: no moves, answers, photos, assignment or comment.
  await expect(page.getByRole("main").getByRole("button")).toHaveCount(0);
  await expect(page.locator("main input, main textarea, main select")).toHaveCount(0);
  await expect(page.getByRole("region", { name: "Status and assignment" })).toHaveCount(0);
  expect(await axeViolations(page)).toEqual([]);
  await noSideways(page);
});
