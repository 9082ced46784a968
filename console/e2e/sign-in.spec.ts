import { apiGet, axeViolations, expect, signIn, test } from "./fixtures";

const SCREENS = ["Dashboard", "PMS sync", "Exports", "Housekeeping", "Work orders", "Stock alerts"];

for (const role of ["admin", "manager", "staff", "viewer"] as const) {
  test(`signs in as ${role} and reaches every screen from the navigation`, async ({ page, request }) => {
    await signIn(page, role);
    const me = await apiGet<{ subject: string; roles: string[] }>(request, role, "/me");
    await expect(page.getByText(`${me.subject} (${role})`)).toBeVisible();
    const nav = page.getByRole("navigation", { name: "Main" });
    for (const name of SCREENS) {
      await nav.getByRole("link", { name, exact: true }).click();
      await expect(page.getByRole("heading", { level: 1, name, exact: true })).toBeVisible();
      await expect(nav.getByRole("link", { name, exact: true })).toHaveAttribute("aria-current", "page");
    }
  });
}

test("signing out and an expired token both lead back to sign-in", async ({ page }) => {
  await signIn(page, "manager");
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page.getByRole("heading", { name: "Sign in" })).toBeVisible();

  await signIn(page, "manager");
  // A token the API no longer accepts (here: corrupted) answers 401: sign-in again, not a blank page.
  await page.evaluate(() => {
    const key = "villa.console.token";
    const [h, p] = sessionStorage.getItem(key)!.split(".");
    sessionStorage.setItem(key, `${h}.${p}.bad-signature`);
  });
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Exports" }).click();
  await page.reload();
  await expect(page.getByRole("heading", { name: "Sign in" })).toBeVisible();
});

test("the sign-in page has no serious accessibility violation", async ({ page }) => {
  await page.goto("./");
  await expect(page.getByRole("heading", { name: "Sign in" })).toBeVisible();
  expect(await axeViolations(page)).toEqual([]);
});
