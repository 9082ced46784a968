// The PMS sync screen against the real platform and its fake PMS. The sync
// routes allow 5 requests a minute per caller, the runs list included, so a
// test may meet a 429: the page waits it out (Retry-After) and so do these
// tests, with timeouts long enough for a minute's wait.
import { axeViolations, expect, signIn, test } from "./fixtures";
import type { Page } from "@playwright/test";

/** A minute of rate limit, the run itself, and slack. */
const SYNC_WAIT = 150_000;

async function noHorizontalScroll(page: Page): Promise<void> {
  const { scrollWidth, clientWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
  }));
  expect(scrollWidth, "the page scrolls sideways").toBeLessThanOrEqual(clientWidth);
}

test("as manager, Sync now starts a sync that the page follows to COMPLETED, with its progress", async ({ page }) => {
  test.setTimeout(4 * 60_000);
  await signIn(page, "manager", "/pms-sync");
  await expect(page.getByRole("heading", { level: 1, name: "PMS sync" })).toBeVisible();
  await expect(page.getByRole("region", { name: "PMS health" }).locator("dt", { hasText: "PMS" })).toBeVisible();
  const runs = page.getByRole("list", { name: "Sync runs, newest first" });
  await expect(runs).toBeVisible({ timeout: SYNC_WAIT });

  // Enabled once any run found going when the page opened has finished.
  const syncNow = page.getByRole("button", { name: "Sync now" });
  await expect(syncNow).toBeEnabled({ timeout: SYNC_WAIT });

  // The fake PMS syncs in about a second: so that the live view can be seen,
  // the first status answer is shown as RUNNING at page 3 of 12, and the
  // second is a 429 as the rate limit answers it. The page must keep the
  // progress on screen, wait as Retry-After says, and follow on to the end.
  let triggered: string | undefined;
  await page.route(/\/reporting\/sync\/trigger$/, async (route) => {
    const real = await route.fetch();
    triggered = ((await real.json()) as { syncId: string }).syncId;
    await route.fulfill({ response: real });
  });
  let statusCalls = 0;
  await page.route(/\/reporting\/sync\/status\/[0-9a-f-]{36}$/, async (route) => {
    // Only the run this test started: a run found going is followed as it is.
    if (!triggered || !route.request().url().endsWith(`/${triggered}`)) return route.continue();
    statusCalls += 1;
    if (statusCalls === 1) {
      const real = await route.fetch();
      const run = (await real.json()) as { progress: Record<string, unknown> };
      await route.fulfill({
        response: real,
        headers: { ...real.headers(), "retry-after": "1" },
        json: {
          ...run,
          status: "RUNNING",
          finishedAt: null,
          progress: { ...run.progress, reservations: { fetched: 300, created: 0, pagesDone: 3, pagesTotal: 12 } },
        },
      });
    } else if (statusCalls === 2) {
      await route.fulfill({
        status: 429,
        headers: { "retry-after": "5", "content-type": "application/json" },
        json: { error: { code: "RATE_LIMIT_EXCEEDED", message: "too many requests", retryAfter: 5 } },
      });
    } else {
      await route.continue();
    }
  });
  await syncNow.click();

  const current = page.getByRole("region", { name: /^(Sync in progress|Latest sync)$/ });
  const status = current.getByRole("status");
  await expect(status).toContainText("RUNNING", { timeout: SYNC_WAIT });
  const reservations = current.getByRole("progressbar", { name: "Reservations progress" });
  await expect(reservations).toHaveAttribute("value", "25");
  await expect(current.getByText("3 of 12 pages, 300 fetched")).toBeVisible();
  // The 429: a wait, with the progress kept.
  await expect(current.getByText(/Waiting for the API's rate limit: its status is asked for again in \d+ s/)).toBeVisible();
  await expect(reservations).toHaveAttribute("value", "25");
  await expect(status).toContainText("RUNNING");
  await expect(current.getByRole("alert")).toHaveCount(0);

  await expect(status).toContainText("COMPLETED", { timeout: SYNC_WAIT });
  expect(statusCalls).toBeGreaterThanOrEqual(3);
  await expect(current.getByText(/Waiting for the API's rate limit/)).toHaveCount(0);
  await expect(current.getByRole("heading", { name: "Latest sync" })).toBeVisible();

  // Its progress per entity: full bars and the counts.
  for (const entity of ["Listings", "Reservations"]) {
    const bar = current.getByRole("progressbar", { name: `${entity} progress` });
    await expect(bar).toHaveAttribute("value", "100");
  }
  await expect(current.getByText(/pages, [\d,.\s]+ fetched/).first()).toBeVisible();

  // The run is in the list, COMPLETED.
  const syncId = (await current.locator("code").first().textContent())!.trim();
  expect(syncId).toBe(triggered);
  const item = runs.getByRole("listitem").filter({ has: page.locator("code", { hasText: syncId }) });
  await expect(item).toHaveCount(1);
  await expect(item.locator(".card-head")).toContainText("COMPLETED");
  await expect(item.getByRole("progressbar", { name: "Reservations progress" })).toHaveAttribute("value", "100");

  expect(await axeViolations(page)).toEqual([]);
  await page.setViewportSize({ width: 375, height: 800 });
  await expect(syncNow).toBeVisible();
  await noHorizontalScroll(page);
  expect(await axeViolations(page)).toEqual([]);
});

test("a viewer sees the health and the runs but no Sync now button", async ({ page }) => {
  test.setTimeout(3 * 60_000);
  await page.setViewportSize({ width: 375, height: 800 });
  await signIn(page, "viewer", "/pms-sync");
  await expect(page.getByRole("heading", { level: 1, name: "PMS sync" })).toBeVisible();
  await expect(page.getByRole("region", { name: "PMS health" }).locator("dt", { hasText: "Overall" })).toBeVisible();
  const runs = page.getByRole("list", { name: "Sync runs, newest first" });
  await expect(runs).toBeVisible({ timeout: SYNC_WAIT });
  // The global setup's full sync, at least.
  await expect(runs.getByRole("listitem").first()).toBeVisible();
  await expect(page.getByRole("button", { name: "Sync now" })).toHaveCount(0);
  await expect(page.getByRole("region", { name: "Start a sync" })).toHaveCount(0);
  await noHorizontalScroll(page);
  expect(await axeViolations(page)).toEqual([]);
});
