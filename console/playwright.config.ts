// Browser tests against the real platform (scripts/console-e2e starts it:
// API, workers, scheduler, fake PMS) in Debian's Chromium, never a browser
// Playwright downloads. CONSOLE_URL is the served console.
import { defineConfig, devices } from "@playwright/test";

const baseURL = process.env.CONSOLE_URL ?? "http://127.0.0.1:8080/console/";

export default defineConfig({
  testDir: "e2e",
  globalSetup: "./e2e/global-setup.ts",
  // One worker: the tests share one platform and its PMS; two cores.
  workers: 1,
  fullyParallel: false,
  retries: 0,
  timeout: 60_000,
  expect: { timeout: 15_000 },
  reporter: [["list"]],
  outputDir: "test-results",
  use: {
    baseURL,
    screenshot: "only-on-failure",
    trace: "off",
    locale: "en-GB",
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-dev-shm-usage"],
    },
  },
  projects: [
    { name: "desktop", use: { ...devices["Desktop Chrome"], channel: undefined } },
  ],
});
