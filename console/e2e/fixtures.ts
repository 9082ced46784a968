// What every browser test shares: signing in as a role through the
// development sign-in page, a token for checking the API directly, and
// axe-core run inside the page.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { expect, test as base, type APIRequestContext, type Page } from "@playwright/test";

export type Role = "admin" | "manager" | "staff" | "viewer";

/** The platform's origin (the console is served under /console/ of it). */
export function apiOrigin(): string {
  return new URL(process.env.CONSOLE_URL ?? "http://127.0.0.1:8080/console/").origin;
}

/** A bearer token for `role` from the development sign-in route. */
export async function tokenFor(request: APIRequestContext, role: Role): Promise<string> {
  const response = await request.post(`${apiOrigin()}/dev/token`, { data: { role } });
  expect(response.status()).toBe(200);
  return ((await response.json()) as { accessToken: string }).accessToken;
}

/** The API answer of `path` for `role`, as JSON, checked to be 2xx. */
export async function apiGet<T>(request: APIRequestContext, role: Role, path: string): Promise<T> {
  const response = await request.get(`${apiOrigin()}${path}`, {
    headers: { Authorization: `Bearer ${await tokenFor(request, role)}` },
  });
  expect(response.ok(), `${path}: ${response.status()} ${await response.text()}`).toBeTruthy();
  return (await response.json()) as T;
}

/** `POST`/`PATCH`/`PUT` to the API as `role`, checked to be 2xx; its JSON answer. */
export async function apiSend<T>(
  request: APIRequestContext,
  role: Role,
  method: "POST" | "PATCH" | "PUT",
  path: string,
  data: unknown,
): Promise<T> {
  const response = await request.fetch(`${apiOrigin()}${path}`, {
    method,
    data,
    headers: { Authorization: `Bearer ${await tokenFor(request, role)}` },
  });
  expect(response.ok(), `${method} ${path}: ${response.status()} ${await response.text()}`).toBeTruthy();
  const text = await response.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** Opens the console at `path` (inside it, e.g. "/exports") signed in as `role`. */
export async function signIn(page: Page, role: Role, path = "/"): Promise<void> {
  await page.goto(`.${path}`);
  await page.getByRole("button", { name: `Sign in as ${role}` }).click();
  await expect(page.getByRole("navigation", { name: "Main" })).toBeVisible();
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/**
 * axe-core's serious and critical violations on the page as it is now. The
 * source is evaluated through the DevTools protocol, which the page's CSP
 * does not govern (an injected <script> would be refused, as it should).
 */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    return result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(", ")})`);
  });
  return violations;
}

/**
 * Fails the test on any Content-Security-Policy violation or uncaught page
 * error: the console must run under its CSP as served.
 */
export const test = base.extend<{ pageErrors: string[] }>({
  pageErrors: [
    async ({ page }, use) => {
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(`page error: ${error.message}`));
      page.on("console", (message) => {
        if (message.type() === "error" && /Content Security Policy/i.test(message.text())) {
          errors.push(`CSP: ${message.text()}`);
        }
      });
      await use(errors);
      expect(errors, "errors in the page").toEqual([]);
    },
    { auto: true },
  ],
});

export { expect };

/** The fake PMS's address (scripts/console-e2e sets FAKE_PMS_URL; scripts/run's default otherwise). */
export function fakePmsUrl(): string {
  return process.env.FAKE_PMS_URL ?? "http://127.0.0.1:8099";
}
