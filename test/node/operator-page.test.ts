/**
 * The operator's page at /admin, opened by a real browser (Debian's Chromium through playwright-core)
 * on a real `wrangler dev` with ADMIN_TOKEN set, after real calls: credit bought with the official
 * x402 client, counters made and used, a refusal, a delivery that dies. The browser gets the token as
 * HTTP Basic (the page's 401 asks for it) and its own fetch of /v1/admin/stats carries it; the
 * charts show the figures the API answers; nothing loads from another origin, the page's CSP is
 * never violated, it fits a 390 px screen, and axe-core finds no violation.
 */
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startWranglerDev } from "../../scripts/wrangler-dev.mjs";
import { launchChromium } from "../peers/chromium";
import { startReceiver } from "../peers/receiver";

const TOKEN = "operator-page-test-token";
const ADMIN = { authorization: `Bearer ${TOKEN}` };

let server: Awaited<ReturnType<typeof startWranglerDev>>;
let browser: Browser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  receiver = await startReceiver();
  // Retries at once, to the local receiver: a delivery that keeps failing dies within seconds.
  // Only failed requests logged: the server's output, kept for a failure's message, is then the queue's, not the
  // stats polls' (ci-52's last 64 KiB held nothing else).
  const vars = {
    ADMIN_TOKEN: TOKEN,
    ALLOW_PRIVATE_TARGETS: "true",
    DELIVERY_RETRY_SCALE: "0",
    REQUEST_LOG: "failures",
  };
  [server, browser] = await Promise.all([startWranglerDev({ vars }), launchChromium()]);
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await receiver?.stop();
});

const api = (path: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}) =>
  fetch(`${server.url}${path}`, {
    method: init.method ?? "GET",
    headers: { "content-type": "application/json", ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });

interface Stats {
  totals: { revenue_usd: number; payments: number; active_resources: number };
  by_day: { day: string; revenue_usd: number; deliveries_dead: number }[];
  by_kind: {
    kind: string | null;
    calls: number;
    refused: number;
    errors: number;
    charged_usd: number;
    active_resources: number;
  }[];
  deliveries: { pending: number; dead: number };
}

/**
 * The figures once `until` holds. Up to 3 minutes: the dying delivery takes 8 attempts and a dead-letter pass through
 * the local queue, which in CI shares 2 cores with the soak's agents (it failed once at 60 s, 2026-11-28).
 */
async function statsWhen(until: (s: Stats) => boolean): Promise<Stats> {
  let s: Stats | undefined;
  for (const deadline = Date.now() + 180_000; Date.now() < deadline;) {
    s = (await (await api("/v1/admin/stats", { headers: ADMIN })).json()) as Stats;
    if (until(s)) return s;
    await new Promise((r) => setTimeout(r, 1000));
  }
  // What the queue did meanwhile (wrangler prints a line per consumed batch) says where the delivery stopped.
  const queueLines = server
    .output()
    .split("\n")
    .filter((line) => /queue|deliver|dead|error/i.test(line))
    .slice(-60);
  const deliveries = JSON.stringify(s?.deliveries);
  throw new Error(`the figures did not reach the expected state: deliveries ${deliveries}\n${queueLines.join("\n")}`);
}

/** A page that records every request and every script or policy problem. */
async function watched(page: Page) {
  const requested: string[] = [];
  const problems: string[] = [];
  page.on("request", (req) => void requested.push(req.url()));
  page.on("console", (msg) => {
    if (/Content Security Policy|Refused to/i.test(msg.text())) problems.push(msg.text());
  });
  page.on("pageerror", (err) => void problems.push(err.message));
  const elsewhere = () =>
    requested.filter((url) => !url.startsWith("data:") && new URL(url).origin !== new URL(server.url).origin);
  return { requested, problems, elsewhere };
}

it("draws the figures the API answers, from its own origin only, at phone width, no accessibility fault", async () => {
  // Credit, bought as an agent would: the official v2 client signs a real x402 payment (settlement "none" locally).
  const client = registerExactEvmScheme(new x402Client(), {
    signer: privateKeyToAccount(generatePrivateKey()),
  }).setSpendControls({ maxAmountPerPayment: "$1" });
  const bought = await wrapFetchWithPayment(fetch, client)(`${server.url}/v1/credits`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ amount_usd: 1 }),
  });
  expect(bought.status).toBe(201);
  const credit = ((await bought.json()) as { credit_token: string }).credit_token;

  const made: { id: string; management_token: string }[] = [];
  for (const notify of [null, null, `${receiver.url}/down/operator-page`]) {
    const res = await api("/v1/counters", {
      method: "POST",
      headers: { authorization: `Bearer ${credit}` },
      body: notify ? { notify_url: notify } : {},
    });
    expect(res.status).toBe(201);
    made.push((await res.json()) as { id: string; management_token: string });
  }
  const [a, , doomed] = made;
  const on = (r: { id: string; management_token: string }, path: string, body?: unknown) =>
    api(`/v1/counters/${r.id}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${r.management_token}`, "x-credit-token": credit },
      body,
    });
  for (let i = 0; i < 3; i++) expect((await on(a!, "/increment", { by: 1 })).status).toBe(200);
  expect((await on(a!, "/increment", { by: 0 })).status).toBe(422);
  // Cancelling the third sends resource.cancelled to a receiver that always fails: it dies.
  expect(
    (
      await api(`/v1/resources/${doomed!.id}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${doomed!.management_token}` },
      })
    ).status,
  ).toBe(200);
  const stats = await statsWhen((s) => s.deliveries.dead === 1 && s.deliveries.pending === 0);
  const counters = stats.by_kind.find((k) => k.kind === "counters")!;
  expect(counters).toMatchObject({ calls: 3 + 3 + 1, refused: 1, errors: 0, active_resources: 2 });
  expect(stats.totals).toMatchObject({ revenue_usd: 1, payments: 1 });

  const context = await browser.newContext({
    viewport: { width: 390, height: 844 },
    isMobile: true,
    httpCredentials: { username: "operator", password: TOKEN },
  });
  const page = await context.newPage();
  const { requested, problems, elsewhere } = await watched(page);
  const res = await page.goto(`${server.url}/admin`);
  expect(res?.status()).toBe(200);
  expect(res?.headers()["content-security-policy"]).toContain("default-src 'none'");
  await page.locator("body[data-loaded=true]").waitFor({ timeout: 30_000 });
  expect(requested).toContain(`${server.url}/v1/admin/stats?days=30`);

  const figure = (name: string) => page.locator(`[data-figure="${name}"] dd`).textContent();
  await expect(figure("Revenue")).resolves.toBe("$1.00");
  await expect(figure("Deliveries dead")).resolves.toBe("1");
  await expect(figure("Deliveries pending")).resolves.toBe("0");
  const bar = (chart: string, selector: string) => page.locator(`#${chart} rect${selector}`).getAttribute("data-value");
  const today = stats.by_day.at(-1)!.day;
  await expect(bar("revenue", `[data-day="${today}"]`)).resolves.toBe("1");
  await expect(bar("calls", '[data-kind="counters"][data-part="answered"]')).resolves.toBe(
    String(counters.calls - counters.refused),
  );
  await expect(bar("calls", '[data-kind="counters"][data-part="refused"]')).resolves.toBe("1");
  await expect(bar("charged", '[data-kind="counters"]')).resolves.toBe(String(counters.charged_usd));
  await expect(bar("active", '[data-kind="counters"]')).resolves.toBe("2");
  await expect(bar("dead", `[data-day="${today}"]`)).resolves.toBe("1");
  await expect(page.locator('#calls text.value[data-kind="counters"]').textContent()).resolves.toBe(
    String(counters.calls),
  );
  // Each chart is an image with a name, and its figures are a table too.
  for (const chart of ["revenue", "calls-by-day", "calls", "charged", "active", "dead"]) {
    await expect(page.locator(`#${chart} svg[role=img] > title`).count(), chart).resolves.toBe(1);
  }

  // Another period: the page fetches again, with the same credential.
  const [week] = await Promise.all([
    page.waitForResponse(`${server.url}/v1/admin/stats?days=7`),
    page.selectOption("#days", "7"),
  ]);
  expect(week.status()).toBe(200);
  await expect(page.locator("#calls-by-day rect").count()).resolves.toBe(7);
  expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);

  expect(elsewhere()).toEqual([]);
  expect(problems).toEqual([]);
  await context.close();
  expect(await accessibilityViolations()).toEqual([]);
}, 300_000);

it("asks for the credential and shows nothing without it", async () => {
  const res = await fetch(`${server.url}/admin`);
  expect(res.status).toBe(401);
  expect(res.headers.get("www-authenticate")).toBe('Basic realm="operator", charset="UTF-8"');
  const context = await browser.newContext({ httpCredentials: { username: "operator", password: "wrong" } });
  const page = await context.newPage();
  expect((await page.goto(`${server.url}/admin`))?.status()).toBe(401);
  await context.close();
});

/**
 * axe-core on the drawn page, its tables open (injected past the CSP, in a context of its own): every violation,
 * whatever its impact.
 */
async function accessibilityViolations(): Promise<string[]> {
  const axe = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
  const context = await browser.newContext({
    bypassCSP: true,
    viewport: { width: 390, height: 844 },
    httpCredentials: { username: "operator", password: TOKEN },
  });
  try {
    const page = await context.newPage();
    await page.goto(`${server.url}/admin`);
    await page.locator("body[data-loaded=true]").waitFor({ timeout: 30_000 });
    await page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })");
    await page.addScriptTag({ content: axe });
    const violations = (await page.evaluate(
      "axe.run().then((r) => r.violations.map((v) => ({ id: v.id, help: v.help, nodes: v.nodes.length })))",
    )) as { id: string; help: string; nodes: number }[];
    return violations.map((v) => `${v.id}: ${v.help} (${v.nodes})`);
  } finally {
    await context.close();
  }
}
