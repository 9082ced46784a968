// The exports screen against the real platform: request an export, follow
// it to COMPLETED in the list, download it through the page and open the
// file; a refused request shows the API's message by the field.
import { readFileSync } from "node:fs";
import type { Locator, Page } from "@playwright/test";
import { apiGet, apiOrigin, axeViolations, expect, signIn, test, tokenFor } from "./fixtures";

type Export = { exportId: string; fileName: string; status: string; rowCount: number | null; createdAt: string };

/** Long enough for a rate-limit wait and the export job. */
const EXPORT_WAIT = 90_000;

/** Records of a CSV text (RFC 4180: quoted fields may hold commas, quotes and line breaks). */
function csvRecords(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      record.push(field);
      field = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      record.push(field);
      records.push(record);
      record = [];
      field = "";
    } else field += c;
  }
  if (field !== "" || record.length > 0) {
    record.push(field);
    records.push(record);
  }
  return records;
}

async function noHorizontalScroll(page: Page): Promise<void> {
  const { scrollWidth, clientWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
  }));
  expect(scrollWidth, "the page scrolls sideways").toBeLessThanOrEqual(clientWidth);
}

/** Fills the form and requests the export; the card of the export it started. */
async function requestExport(
  page: Page,
  { type, format, start, end }: { type: string; format: RegExp; start: string; end: string },
): Promise<Locator> {
  await page.getByLabel("Type").selectOption(type);
  await page.getByRole("radio", { name: format }).check();
  await page.getByLabel("Start date").fill(start);
  await page.getByLabel("End date").fill(end);
  await page.getByRole("button", { name: "Request export" }).click();
  await expect(page.getByRole("status").filter({ hasText: /in the list below/ })).toBeVisible({ timeout: EXPORT_WAIT });
  const extension = /csv/i.test(format.source) ? "csv" : "xlsx";
  const fileName = `${type}_${start}_${end}.${extension}`;
  const list = page.getByRole("list", { name: "Exports, newest first" });
  return list.getByRole("listitem").filter({ hasText: fileName }).first();
}

test("as manager, a CSV export is followed to COMPLETED, downloaded and opened", async ({ page, request }) => {
  test.setTimeout(3 * 60_000);
  await signIn(page, "manager", "/exports");
  await expect(page.getByRole("heading", { level: 1, name: "Exports" })).toBeVisible();
  const fileName = "listings_2026-01-01_2026-01-31.csv";

  // The job makes this file in well under a second: so that the live view
  // can be seen, the first status answer is shown as PROCESSING at 40 %, and
  // the second is a 429. The page must show the progress, wait as
  // Retry-After says, and follow on to COMPLETED.
  let requested: string | undefined;
  await page.route(/\/reporting\/export$/, async (route) => {
    if (route.request().method() !== "POST") return route.continue();
    const real = await route.fetch();
    requested = ((await real.json()) as { exportId: string }).exportId;
    await route.fulfill({ response: real });
  });
  let statusCalls = 0;
  await page.route(/\/reporting\/export\/[0-9a-f-]{36}$/, async (route) => {
    // Only the export this test requests: others PROCESSING in the list are followed as they are.
    if (!requested || !route.request().url().endsWith(`/${requested}`)) return route.continue();
    statusCalls += 1;
    if (statusCalls === 1) {
      const real = await route.fetch();
      const made = (await real.json()) as Export;
      await route.fulfill({
        response: real,
        headers: { ...real.headers(), "retry-after": "1" },
        json: { ...made, status: "PROCESSING", progress: 40, rowCount: null, downloadUrl: null, completedAt: null },
      });
    } else if (statusCalls === 2) {
      await route.fulfill({
        status: 429,
        headers: { "retry-after": "4", "content-type": "application/json" },
        json: { error: { code: "RATE_LIMIT_EXCEEDED", message: "too many requests", retryAfter: 4 } },
      });
    } else {
      await route.continue();
    }
  });

  const card = await requestExport(page, { type: "listings", format: /^CSV/, start: "2026-01-01", end: "2026-01-31" });
  await expect(card).toBeVisible({ timeout: EXPORT_WAIT });
  await expect(card.locator(".card-head")).toContainText("PROCESSING");
  await expect(card.getByRole("progressbar", { name: `Progress of ${fileName}` })).toHaveAttribute("value", "40");
  await expect(page.getByText(/Waiting for the API's rate limit: the exports' status is asked for again/)).toBeVisible();
  await expect(card.getByRole("progressbar")).toHaveAttribute("value", "40");
  await expect(card.locator(".card-head")).toContainText("COMPLETED", { timeout: EXPORT_WAIT });
  expect(statusCalls).toBeGreaterThanOrEqual(3);
  await expect(card.getByRole("progressbar")).toHaveCount(0);
  const made = await apiGet<Export>(request, "manager", `/reporting/export/${requested}`);
  expect(made).toMatchObject({ fileName, status: "COMPLETED" });
  expect(made!.rowCount).toBeGreaterThan(0);
  await expect(card.locator("dt", { hasText: "Rows" }).locator("xpath=following-sibling::dd")).toHaveText(
    new Intl.NumberFormat("en-GB").format(made!.rowCount!),
  );

  const [download] = await Promise.all([
    page.waitForEvent("download"),
    card.getByRole("button", { name: /^Download/ }).click(),
  ]);
  expect(download.suggestedFilename()).toBe(fileName);
  const text = readFileSync((await download.path())!, "utf8").replace(/^\uFEFF/, "");
  const [header, ...rows] = csvRecords(text).filter((r) => r.some((f) => f !== ""));
  expect(header!.slice(0, 3)).toEqual(["Listing ID", "PMS ID", "Listing"]);
  expect(rows.length).toBe(made!.rowCount);
  for (const row of rows) expect(row.length).toBe(header!.length);

  expect(await axeViolations(page)).toEqual([]);
});

test("as manager, an Excel export downloads as a workbook", async ({ page }) => {
  test.setTimeout(3 * 60_000);
  await signIn(page, "manager", "/exports");
  const card = await requestExport(page, { type: "revenue", format: /^Excel/, start: "2026-01-01", end: "2026-03-31" });
  await expect(card.locator(".card-head")).toContainText("COMPLETED", { timeout: EXPORT_WAIT });
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    card.getByRole("button", { name: /^Download/ }).click(),
  ]);
  expect(download.suggestedFilename()).toBe("revenue_2026-01-01_2026-03-31.xlsx");
  const bytes = readFileSync((await download.path())!);
  expect(bytes.length).toBeGreaterThan(0);
  // An .xlsx is a zip archive.
  expect(bytes.subarray(0, 2).toString("latin1")).toBe("PK");
});

test("a refused request shows the API's message by the field", async ({ page, request }) => {
  await signIn(page, "manager", "/exports");
  const body = { type: "listings", format: "csv", startDate: "2026-03-02", endDate: "2026-03-01" };
  // What the API says of this request, straight from it.
  const answer = await request.post(`${apiOrigin()}/reporting/export`, {
    data: body,
    headers: { Authorization: `Bearer ${await tokenFor(request, "manager")}` },
  });
  expect(answer.status()).toBe(400);
  const { message } = ((await answer.json()) as { error: { message: string } }).error;
  const [field, ...said] = message.split(": ");
  expect(["startDate", "endDate"]).toContain(field);
  const fieldMessage = said.join(": ");

  await page.getByLabel("Type").selectOption(body.type);
  await page.getByRole("radio", { name: /^CSV/ }).check();
  await page.getByLabel("Start date").fill(body.startDate);
  await page.getByLabel("End date").fill(body.endDate);
  await page.getByRole("button", { name: "Request export" }).click();

  const input = page.getByLabel(field === "startDate" ? "Start date" : "End date");
  await expect(input).toHaveAttribute("aria-invalid", "true");
  await expect(input).toHaveAccessibleDescription(new RegExp(fieldMessage.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
  await expect(input).toBeFocused();
  await expect(page.getByText(fieldMessage, { exact: true })).toBeVisible();
  await expect(page.getByRole("alert")).toContainText("The API refused the request");

  expect(await axeViolations(page)).toEqual([]);
  await page.setViewportSize({ width: 375, height: 800 });
  await expect(page.getByRole("list", { name: "Exports, newest first" })).toBeVisible({ timeout: EXPORT_WAIT });
  await noHorizontalScroll(page);
  expect(await axeViolations(page)).toEqual([]);
});
