// Before the browser tests: one full PMS sync (as admin, through the API), so
// the dashboard, the board and the exports have the fake PMS's listings and
// reservations. The sync routes allow 5 requests a minute per caller, so the
// status is polled as Retry-After says.
import { request } from "@playwright/test";
import { apiOrigin } from "./fixtures";

export default async function globalSetup(): Promise<void> {
  const api = await request.newContext({ baseURL: apiOrigin() });
  const token = await api.post("/dev/token", { data: { role: "admin" } });
  if (!token.ok()) throw new Error(`/dev/token: ${token.status()} ${await token.text()}`);
  const headers = { Authorization: `Bearer ${((await token.json()) as { accessToken: string }).accessToken}` };
  const deadline = Date.now() + 180_000;
  let started = await trigger();
  // Rate limited (the platform is shared with a developer's own calls): wait as it says.
  while (started.status() === 429 && Date.now() < deadline) {
    await sleepSeconds(Number(started.headers()["retry-after"] ?? "5"));
    started = await trigger();
  }
  if (started.status() !== 202) throw new Error(`sync trigger: ${started.status()} ${await started.text()}`);
  const { syncId } = (await started.json()) as { syncId: string };
  for (;;) {
    const status = await api.get(`/reporting/sync/status/${syncId}`, { headers });
    const wait = Number(status.headers()["retry-after"] ?? "2");
    if (status.ok()) {
      const body = (await status.json()) as { status: string; error?: string };
      if (body.status === "COMPLETED") break;
      if (body.status === "FAILED") throw new Error(`the setup sync failed: ${JSON.stringify(body)}`);
    } else if (status.status() !== 429) {
      throw new Error(`sync status: ${status.status()} ${await status.text()}`);
    }
    if (Date.now() > deadline) throw new Error("the setup sync did not complete within 3 minutes");
    await sleepSeconds(wait);
  }
  await api.dispose();

  function trigger() {
    return api.post("/reporting/sync/trigger", {
      headers,
      data: { type: "full", entities: ["listings", "reservations"] },
    });
  }
}

function sleepSeconds(seconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(1, seconds) * 1000));
}
