// What the issue asks of every screen beyond its own features: keyboard-only
// use, targets a thumb can hit on a phone, and a token that expires while
// the console is open.
import { expect, signIn, test } from "./fixtures";

const SCREENS = [
  ["/", "Dashboard"],
  ["/pms-sync", "PMS sync"],
  ["/exports", "Exports"],
  ["/housekeeping", "Housekeeping"],
  ["/work-orders", "Work orders"],
  ["/stock-alerts", "Stock alerts"],
] as const;

test("keyboard only: skip to the content, then reach and open a screen from the navigation", async ({ page }) => {
  await signIn(page, "manager");
  await expect(page.getByRole("heading", { level: 1, name: "Dashboard" })).toBeVisible();
  // A fresh load (the token is kept for the tab): the first Tab is the skip link.
  await page.reload();
  await expect(page.getByRole("heading", { level: 1, name: "Dashboard" })).toBeVisible();
  await page.keyboard.press("Tab");
  await expect(page.getByRole("link", { name: "Skip to content" })).toBeFocused();
  await expect(page.getByRole("link", { name: "Skip to content" })).toBeInViewport();
  // Tab along the navigation to "Stock alerts" and open it with Enter.
  for (let i = 0; i < 10; i++) {
    await page.keyboard.press("Tab");
    const focused = await page.evaluate(() => document.activeElement?.textContent?.trim());
    if (focused === "Stock alerts") break;
  }
  await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Stock alerts" })).toBeFocused();
  await page.keyboard.press("Enter");
  // The new screen's heading takes focus, so the next Tab starts from the content.
  await expect(page.getByRole("heading", { level: 1, name: "Stock alerts" })).toBeFocused();
});

test("on a phone, every control of every screen is at least 44 px in both directions", async ({ page }) => {
  await page.setViewportSize({ width: 375, height: 800 });
  await signIn(page, "manager");
  for (const [path, title] of SCREENS) {
    await page.goto(`.${path}`);
    await expect(page.getByRole("heading", { level: 1, name: title })).toBeVisible();
    await page.waitForLoadState("networkidle");
    const small = await page.evaluate(() => {
      // Controls, and the links that stand alone (a link inside a sentence is exempt: WCAG 2.5.5).
      const controls = [...document.querySelectorAll<HTMLElement>("button, select, input, textarea, nav a, a.button")];
      const out: string[] = [];
      for (const control of controls) {
        if (control instanceof HTMLInputElement && control.type === "hidden") continue;
        // A radio or checkbox is hit through its label.
        const target =
          control instanceof HTMLInputElement && (control.type === "radio" || control.type === "checkbox")
            ? (control.closest("label") ?? (control.id ? document.querySelector<HTMLElement>(`label[for="${control.id}"]`) : null) ?? control)
            : control;
        const box = target.getBoundingClientRect();
        if (box.width === 0 && box.height === 0) continue; // not shown
        if (getComputedStyle(target).visibility === "hidden") continue;
        if (box.width < 44 - 0.5 || box.height < 44 - 0.5) {
          out.push(`${target.tagName.toLowerCase()} "${(target.textContent || target.getAttribute("aria-label") || (target as HTMLInputElement).name || "").trim().slice(0, 40)}" ${Math.round(box.width)}×${Math.round(box.height)}`);
        }
      }
      return out;
    });
    expect(small, `${title}: controls under 44 px`).toEqual([]);
  }
});

test("a token that expires while the console is open leads back to sign-in, not a blank page", async ({ page }) => {
  await page.clock.install({ time: new Date() });
  await signIn(page, "manager");
  await expect(page.getByRole("heading", { level: 1, name: "Dashboard" })).toBeVisible();
  // Development tokens last 8 hours; the console checks the token's expiry every 30 s.
  await page.clock.fastForward("08:01:00");
  await expect(page.getByRole("heading", { name: "Sign in" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Sign in as manager" })).toBeVisible();
});
