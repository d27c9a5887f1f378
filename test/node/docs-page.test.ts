/**
 * The API reference at /docs, opened by a real browser (Debian's Chromium through
 * playwright-core) on a real `wrangler dev`: it renders the document and lists the
 * operations, loading everything from the service's own origin (no request leaves
 * for another), and the page's Content-Security-Policy is never violated.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { startWranglerDev } from "../../scripts/wrangler-dev.mjs";
import { launchChromium } from "../peers/chromium";

let server: Awaited<ReturnType<typeof startWranglerDev>>;
let browser: Browser;

beforeAll(async () => {
  [server, browser] = await Promise.all([startWranglerDev(), launchChromium()]);
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

it("renders the reference and lists the operations, with nothing loaded from another origin", async () => {
  const page = await browser.newPage();
  const origin = new URL(server.url).origin;
  const requested: string[] = [];
  const problems: string[] = [];
  page.on("request", (req) => void requested.push(req.url()));
  page.on("console", (msg) => {
    if (msg.type() === "error" || /Content Security Policy/i.test(msg.text())) problems.push(msg.text());
  });
  page.on("pageerror", (err) => void problems.push(err.message));

  const res = await page.goto(`${server.url}/docs`, { waitUntil: "load" });
  expect(res?.status()).toBe(200);
  // Redoc draws a section per operation once it has read the document.
  await page.locator("[id='operation/counters_increment']").waitFor({ timeout: 60_000 });
  const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, { operationId: string }>> };
  const documented = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => `operation/${op.operationId}`));
  const shown = new Set(await page.locator("[id^='operation/']").evaluateAll((nodes) => nodes.map((n) => n.id)));
  expect(documented.filter((id) => !shown.has(id))).toEqual([]);
  await expect(page.locator("[id='operation/counters_increment']").textContent()).resolves.toContain("Add to the counter");
  await expect(page.title()).resolves.toBe("zeitvault API reference");

  const elsewhere = requested.filter((url) => !url.startsWith("data:") && !url.startsWith("blob:") && new URL(url).origin !== origin);
  expect(elsewhere).toEqual([]);
  expect(requested).toContain(`${origin}/openapi.json`);
  expect(problems).toEqual([]);
});
