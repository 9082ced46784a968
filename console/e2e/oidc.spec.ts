// The production sign-in: OpenID Connect code + PKCE at the identity provider
// (fake-idp, the loopback stand-in), against an API in production mode
// (scripts/console-e2e starts both; OIDC_CONSOLE_URL is its console).
import { expect, test } from "./fixtures";

const consoleUrl = process.env.OIDC_CONSOLE_URL;

test.describe("sign-in through the identity provider", () => {
  test.skip(!consoleUrl, "OIDC_CONSOLE_URL is set by scripts/console-e2e");

  test("a manager signs in with code and PKCE and lands where they were going", async ({ page }) => {
    await page.goto(`${consoleUrl}exports`);
    // Production: no development roles, one button to the provider.
    await expect(page.getByRole("heading", { name: "Sign in" })).toBeVisible();
    await expect(page.getByRole("button", { name: /Sign in as/ })).toHaveCount(0);
    await page.getByRole("button", { name: /^Sign in with 127\.0\.0\.1:\d+$/ }).click();

    await expect(page.getByRole("heading", { name: "Fake identity provider" })).toBeVisible();
    const authorize = new URL(page.url());
    expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorize.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await page.getByLabel("User").selectOption({ label: "Made (manager)" });
    await page.getByRole("button", { name: "Continue" }).click();

    await expect(page.getByRole("heading", { level: 1, name: "Exports" })).toBeVisible();
    await expect(page.getByText("idp-manager (manager)")).toBeVisible();
    // The code is gone from the address once used.
    expect(page.url()).not.toContain("code=");
  });

  test("production serves no development sign-in route", async ({ request }) => {
    const origin = new URL(consoleUrl!).origin;
    const response = await request.post(`${origin}/dev/token`, { data: { role: "admin" } });
    expect(response.status()).toBe(401);
  });

  test("a code exchanged without its verifier is refused by the provider", async ({ page, request }) => {
    // Follow the flow until the provider redirects back, then stop before the console uses the code.
    await page.goto(consoleUrl!);
    await page.getByRole("button", { name: /^Sign in with/ }).click();
    await expect(page.getByRole("heading", { name: "Fake identity provider" })).toBeVisible();
    const issuer = new URL(page.url()).origin;
    await page.route("**/console/signed-in*", (route) => route.abort());
    const back = page.waitForRequest("**/console/signed-in*");
    await page.getByRole("button", { name: "Continue" }).click();
    const code = new URL((await back).url()).searchParams.get("code")!;
    const exchange = await request.post(`${issuer}/token`, {
      form: {
        grant_type: "authorization_code",
        code,
        client_id: "villa-console",
        redirect_uri: `${new URL(consoleUrl!).origin}/console/signed-in`,
        code_verifier: "a".repeat(43),
      },
    });
    expect(exchange.status()).toBe(400);
    expect(((await exchange.json()) as { error: string }).error).toBe("invalid_grant");
  });
});
