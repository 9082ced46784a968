// The owner's approval page, as an owner meets it: a link opened on a phone
// (375 px), with JavaScript off, answered with the form alone; no serious or
// critical axe-core violation on the page or its confirmation; a second use
// shows a page saying so and changes nothing.
import type { APIRequestContext, Browser } from "@playwright/test";
import { apiGet, apiOrigin, apiSend, axeViolations, expect, test, tokenFor } from "./fixtures";
import { png } from "./setup";

interface WorkOrder {
  id: string;
  status: string;
  approvals: { channel: string; decision: string | null; note: string | null }[];
}

/** An owner with a USD 350 threshold, a villa of theirs, and a work order of it awaiting approval with a photo. */
async function awaitingApproval(request: APIRequestContext): Promise<{ order: string; url: string }> {
  const stamp = Date.now();
  const owner = await apiSend<{ id: string }>(request, "manager", "POST", "/management/owners", {
    ownerType: "INDIVIDUAL",
    firstName: "Ayu",
    lastName: `Owner ${stamp}`,
    phone: "+62 812 0000 0001",
    email: `ayu.${stamp}@example.test`,
    approvalThreshold: { amount: 350, currency: "USD" },
  });
  const villa = await apiSend<{ id: string }>(request, "manager", "POST", "/management/villas", {
    name: `Villa Approval ${stamp}`,
    propertyType: "VILLA",
    bedrooms: 3,
    bathrooms: 3,
    maxGuests: 6,
    city: "Canggu",
    country: "Indonesia",
    ownerId: owner.id,
  });
  const order = await apiSend<WorkOrder>(request, "manager", "POST", "/maintenance/work-orders", {
    title: "Replace the pool pump",
    villaId: villa.id,
    category: "POOL",
    priority: "HIGH",
    description: "The pump trips the breaker every night; the motor is burnt.",
  });
  const photo = await request.post(`${apiOrigin()}/maintenance/field-notes`, {
    headers: { Authorization: `Bearer ${await tokenFor(request, "staff")}` },
    multipart: {
      type: "PHOTO",
      workOrderId: order.id,
      file: { name: "pump.png", mimeType: "image/png", buffer: png() },
    },
  });
  expect(photo.status(), await photo.text()).toBe(201);
  for (const line of [
    { kind: "PARTS", description: "Pump, 1.5 HP", amount: 480 },
    { kind: "LABOUR", description: "Fitting and test, 3 hours", amount: 140 },
  ]) {
    await apiSend(request, "staff", "POST", `/maintenance/work-orders/${order.id}/costs`, {
      ...line,
      currency: "USD",
      billTo: "OWNER",
      estimate: true,
    });
  }
  const waiting = await apiGet<WorkOrder>(request, "staff", `/maintenance/work-orders/${order.id}`);
  expect(waiting.status).toBe("AWAITING_APPROVAL");
  const sent = await apiSend<{ approvalUrl: string }>(
    request,
    "manager",
    "POST",
    `/maintenance/work-orders/${order.id}/approval-requests`,
    undefined,
  );
  return { order: order.id, url: sent.approvalUrl };
}

async function phone(browser: Browser, javaScriptEnabled: boolean) {
  const context = await browser.newContext({ viewport: { width: 375, height: 740 }, javaScriptEnabled, locale: "en-GB" });
  return { context, page: await context.newPage() };
}

test("an owner approves on a phone, without JavaScript, and the link then says it was used", async ({ browser, request }) => {
  const { order, url } = await awaitingApproval(request);

  // With scripts on only to measure: layout at 375 px, target sizes, the photo, axe.
  const look = await phone(browser, true);
  const shown = await look.page.goto(url);
  expect(shown?.status()).toBe(200);
  await expect(look.page.getByRole("heading", { level: 1, name: "Approval needed: Replace the pool pump" })).toBeVisible();
  await expect(look.page.getByRole("cell", { name: /Pump, 1\.5 HP/ })).toBeVisible();
  await expect(look.page.getByRole("cell", { name: "USD 620.00" })).toBeVisible();
  const photo = look.page.getByRole("img", { name: "Photo 1 of the work" });
  await expect(photo).toBeVisible();
  expect(await photo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
  const layout = await look.page.evaluate(() => ({
    overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    small: [...document.querySelectorAll<HTMLElement>("button, textarea")]
      .map((el) => el.getBoundingClientRect())
      .filter((box) => box.width < 44 || box.height < 44).length,
  }));
  expect(layout).toEqual({ overflow: 0, small: 0 });
  expect(await axeViolations(look.page)).toEqual([]);
  await look.context.close();

  // The owner's own phone, JavaScript off: the form alone records the decision.
  const owner = await phone(browser, false);
  await owner.page.goto(url);
  await owner.page.getByLabel("Note for your villa manager (optional)").fill("Yes, go ahead before the guests arrive.");
  await owner.page.getByRole("button", { name: "Approve" }).click();
  await expect(owner.page.getByRole("heading", { level: 1, name: "Thank you: approved" })).toBeVisible();
  const approved = await apiGet<WorkOrder>(request, "manager", `/maintenance/work-orders/${order}`);
  expect(approved.status).toBe("OPEN");
  expect(approved.approvals[0]).toMatchObject({ channel: "LINK", decision: "APPROVED", note: "Yes, go ahead before the guests arrive." });

  // A second use: a page saying so, nothing changed.
  const again = await owner.page.goto(url);
  expect(again?.status()).toBe(410);
  await expect(owner.page.getByRole("heading", { level: 1, name: "Already answered" })).toBeVisible();
  await owner.context.close();

  const check = await phone(browser, true);
  await check.page.goto(url);
  expect(await axeViolations(check.page)).toEqual([]);
  await check.context.close();
  expect((await apiGet<WorkOrder>(request, "manager", `/maintenance/work-orders/${order}`)).status).toBe("OPEN");
});
