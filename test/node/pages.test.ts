/**
 * Pages meant for people, opened by a real browser (Debian's Chromium through
 * playwright-core) on a real `wrangler dev`:
 * - the landing page at 390 px wide: the page never scrolls sideways, its code blocks wrap within
 *   themselves, every kind is in its family's table with its price; axe-core finds nothing at all;
 * - the API reference at /docs renders the document and lists the operations;
 * - a one-time secret's link shows that a secret is waiting (looking uses nothing up),
 *   takes its passphrase, reveals the value once with a working copy button, and then
 *   shows that nothing is here;
 * - a request bin's view link lists its captures, newest first, with their headers and bodies
 *   (markup in them shown as text), pages back, and downloads a raw body byte-exact;
 * - a front door's page takes a message from a person and shows its receipt, and the agent pulls it;
 * - a form is filled in by keyboard at phone width and submitted (kept, and relayed to a webhook),
 *   and again with the honeypot filled (discarded); axe-core finds no serious accessibility problem;
 * - an approval's page: a person approves with a comment, the decision record verifies against the
 *   JWKS, a second click changes nothing; no serious accessibility problem either;
 * - an escalation's ack page, opened from the link its first step sent: a person acknowledges by name,
 *   the incident's timeline says who and when, and no further step goes out;
 * - times on the approval, bin and escalation pages shown in the reader's time zone (a browser set to
 *   Asia/Kolkata), the UTC instant in `<time datetime>` and the UTC words in its title;
 * - an OAuth flow through a real OpenID provider (oidc-provider) with PKCE: authorize, sign in,
 *   consent, the callback exchanges the code, and the agent gets the tokens;
 * - the page a problem's `type` opens (`/errors/{code}`): readable at phone width, no serious
 *   accessibility problem, the same address JSON for an agent.
 * Everything loads from the service's own origin (no request leaves for another), and no
 * page's Content-Security-Policy is ever violated.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { freePort, startWranglerDev } from "../../scripts/wrangler-dev.mjs";
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { compactVerify, createRemoteJWKSet, jwtVerify } from "jose";
import { launchChromium } from "../peers/chromium";
import { startReceiver } from "../peers/receiver";
import { startOidcProvider } from "../peers/oidc";

let server: Awaited<ReturnType<typeof startWranglerDev>>;
let browser: Browser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  // The anonymous free tier pays for what this test creates; a form relays to the local receiver.
  receiver = await startReceiver();
  [server, browser] = await Promise.all([
    startWranglerDev({ vars: { FREE_CALLS_PER_DAY: "60", ALLOW_PRIVATE_TARGETS: "true" } }),
    launchChromium(),
  ]);
}, 180_000);

/** A page that records every request and every script or policy problem. */
async function watchedPage(context?: import("playwright-core").BrowserContext) {
  const page = await (context ?? browser).newPage();
  const requested: string[] = [];
  const problems: string[] = [];
  page.on("request", (req) => void requested.push(req.url()));
  page.on("console", (msg) => {
    if (/Content Security Policy|Refused to/i.test(msg.text())) problems.push(msg.text());
  });
  page.on("pageerror", (err) => void problems.push(err.message));
  const elsewhere = () =>
    requested.filter(
      (url) =>
        !url.startsWith("data:") && !url.startsWith("blob:") && new URL(url).origin !== new URL(server.url).origin,
    );
  return { page, requested, problems, elsewhere };
}
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await receiver?.stop();
});

it(
  "the landing page at 390 px: no sideways scroll of the page, its code blocks wrap within themselves, " +
    "every kind in its family's table; axe finds nothing",
  async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const { page, problems, elsewhere } = await watchedPage(context);
    expect((await page.goto(`${server.url}/`))?.status()).toBe(200);
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    const blocks = (await page
      .locator("pre")
      .evaluateAll((nodes) =>
        nodes.map((n) => ({ right: n.getBoundingClientRect().right, scroll: n.scrollWidth, client: n.clientWidth })),
      )) as { right: number; scroll: number; client: number }[];
    expect(blocks.length).toBeGreaterThan(0);
    for (const b of blocks) {
      expect(b.right).toBeLessThanOrEqual(390);
      // Nothing runs off the block's edge (a phone shows no scrollbar to say there is more): its lines wrap.
      expect(b.scroll).toBeLessThanOrEqual(b.client);
    }
    const tables = page.locator(".kinds table");
    await expect(tables.count()).resolves.toBe(6);
    for (const box of await tables.evaluateAll((nodes) => nodes.map((n) => n.getBoundingClientRect().right)))
      expect(box).toBeLessThanOrEqual(390);
    const prices = (await (await fetch(`${server.url}/v1/prices`)).json()) as { operations: { operation: string }[] };
    const creatable = prices.operations
      .filter((o) => o.operation.endsWith(".create"))
      .map((o) => o.operation.slice(0, -".create".length));
    await expect(page.locator(".kinds th[scope=row] code").allTextContents()).resolves.toEqual(
      expect.arrayContaining(creatable),
    );
    await expect(page.locator(".kinds tbody tr").count()).resolves.toBe(creatable.length);
    expect(await accessibilityProblems(`${server.url}/`, true)).toEqual([]);
    expect(elsewhere()).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  },
);

it("renders the reference and lists the operations, with nothing loaded from another origin", async () => {
  const { page, requested, problems, elsewhere } = await watchedPage();
  const origin = new URL(server.url).origin;

  const res = await page.goto(`${server.url}/docs`, { waitUntil: "load" });
  expect(res?.status()).toBe(200);
  // Redoc draws a section per operation once it has read the document.
  await page.locator("[id='operation/counters_increment']").waitFor({ timeout: 60_000 });
  const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { operationId: string }>>;
  };
  const documented = Object.values(doc.paths).flatMap((item) =>
    Object.values(item).map((op) => `operation/${op.operationId}`),
  );
  const shown = new Set(await page.locator("[id^='operation/']").evaluateAll((nodes) => nodes.map((n) => n.id)));
  expect(documented.filter((id) => !shown.has(id))).toEqual([]);
  await expect(page.locator("[id='operation/counters_increment']").textContent()).resolves.toContain(
    "Add to the counter",
  );
  await expect(page.title()).resolves.toBe("zeitvault API reference");

  expect(elsewhere()).toEqual([]);
  expect(requested).toContain(`${origin}/openapi.json?kinds=all`);
  expect(problems).toEqual([]);
});

it("a one-time secret: waiting, passphrase, revealed once with a copy button, then nothing is here", async () => {
  const value = "postgres://app:s3cret@db.example.com:5432/app <&> 'quoted'";
  const created = await fetch(`${server.url}/v1/secrets`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ value, passphrase: "correct horse", max_passphrase_attempts: 3 }),
  });
  expect(created.status).toBe(201);
  const link = ((await created.json()) as { urls: { public: string } }).urls.public;

  const context = await browser.newContext();
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: new URL(server.url).origin });
  const { page, problems, elsewhere } = await watchedPage(context);
  const first = await page.goto(link);
  expect(first?.status()).toBe(200);
  expect(first?.headers()["content-security-policy"]).toContain("default-src 'none'");
  await expect(page.locator("h1").textContent()).resolves.toBe("A secret is waiting for you");
  // Looking (a link preview, a reload) uses nothing up.
  await page.goto(link);
  await expect(page.locator("h1").textContent()).resolves.toBe("A secret is waiting for you");

  await page.fill("#passphrase", "wrong horse");
  await page.click("button[type=submit]");
  await expect(page.locator("[role=alert]").textContent()).resolves.toBe("Wrong passphrase; 2 attempt(s) left.");

  await page.fill("#passphrase", "correct horse");
  await page.click("button[type=submit]");
  await expect(page.locator("h1").textContent()).resolves.toBe("Your secret");
  await expect(page.locator("#secret").inputValue()).resolves.toBe(value);
  await page.click("#copy");
  await page.locator("#copy", { hasText: /^(Copied|Press Ctrl\+C to copy)$/ }).waitFor({ timeout: 5000 });
  await expect(page.locator("#copy").textContent()).resolves.toBe("Copied");
  await expect(page.evaluate<string>("navigator.clipboard.readText()")).resolves.toBe(value);

  const after = await page.goto(link);
  expect(after?.status()).toBe(404);
  await expect(page.locator("h1").textContent()).resolves.toBe("Nothing is here");
  const unknown = await page.goto(`${new URL(link).origin}/p/secrets_${"A".repeat(43)}`);
  expect(unknown?.status()).toBe(404);
  await expect(page.locator("h1").textContent()).resolves.toBe("Nothing is here");

  expect(elsewhere()).toEqual([]);
  expect(problems).toEqual([]);
  await context.close();
});

it("a request bin's view link: captures newest first, markup as text, older pages, a raw body downloaded", async () => {
  const created = await fetch(`${server.url}/v1/bins`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  expect(created.status).toBe(201);
  const record = (await created.json()) as { id: string; management_token: string; urls: { public: string } };
  const address = record.urls.public;
  const binary = new Uint8Array(256).map((_, i) => 255 - i);
  expect(
    (
      await fetch(`${address}/first`, {
        method: "PUT",
        body: binary,
        headers: { "content-type": "application/octet-stream" },
      })
    ).status,
  ).toBe(200);
  for (let n = 0; n < 50; n++)
    await (
      await fetch(`${address}/hook?n=${n}`, {
        method: "POST",
        body: `<img src=x onerror=alert(${n})>`,
        headers: { "x-n": String(n) },
      })
    ).body?.cancel();
  const info = await fetch(`${server.url}/v1/bins/${record.id}`, {
    headers: { authorization: `Bearer ${record.management_token}` },
  });
  expect(info.status).toBe(200);
  const { view_url } = (await info.json()) as { view_url: string };

  const { page, problems, elsewhere } = await watchedPage();
  const res = await page.goto(view_url);
  expect(res?.status()).toBe(200);
  await expect(page.locator("h1").textContent()).resolves.toBe("Request bin");
  // The newest first, 50 to a page; the markup a request carried is text on the page, never run.
  const cards = page.locator("article");
  await expect(cards.count()).resolves.toBe(50);
  await expect(cards.first().locator("h2").textContent()).resolves.toBe("POST/hook?n=49");
  await expect(cards.first().locator("pre").textContent()).resolves.toBe("<img src=x onerror=alert(49)>");
  await expect(page.locator("article img").count()).resolves.toBe(0);
  await cards.first().locator("summary").click();
  await expect(cards.first().locator("dd", { hasText: /^49$/ }).count()).resolves.toBeGreaterThan(0);

  await page.click("a[rel=next]");
  await expect(page.locator("article").count()).resolves.toBe(1);
  await expect(page.locator("article h2").textContent()).resolves.toBe("PUT/first");
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("text=Download the raw body")]);
  const saved = await download.createReadStream();
  const chunks: Buffer[] = [];
  for await (const chunk of saved) chunks.push(chunk as Buffer);
  expect(new Uint8Array(Buffer.concat(chunks))).toEqual(binary);

  expect(elsewhere()).toEqual([]);
  expect(problems).toEqual([]);
});

it("a front door's page: a person leaves a message, gets a receipt, and the agent pulls it", async () => {
  const created = await fetch(`${server.url}/v1/frontdoor`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "Ada's <agent>" }),
  });
  expect(created.status).toBe(201);
  const record = (await created.json()) as { id: string; management_token: string; urls: { public: string } };
  expect(await accessibilityProblems(record.urls.public)).toEqual([]);
  const { page, problems, elsewhere } = await watchedPage();
  expect((await page.goto(record.urls.public))?.status()).toBe(200);
  await expect(page.locator("h1").textContent()).resolves.toBe("Leave a message for Ada's <agent>");
  await page.fill("#message", "Please call me back <soon>");
  await page.fill("#from", "Bob");
  await page.click("button[type=submit]");
  await page.locator("#receipt").waitFor();
  const receipt = await page.locator("#receipt").textContent();
  expect(receipt).toMatch(/^rcpt_/);
  await page.click("#status");
  await expect(page.locator("body").textContent()).resolves.toContain('"status":"pending"');

  const pulled = await fetch(`${server.url}/v1/frontdoor/${record.id}/items`, {
    headers: { authorization: `Bearer ${record.management_token}` },
  });
  expect(pulled.status).toBe(200);
  const { items } = (await pulled.json()) as { items: { content_type: string; body_text: string }[] };
  expect(items).toHaveLength(1);
  expect(items[0]!.content_type).toBe("application/x-www-form-urlencoded");
  expect(Object.fromEntries(new URLSearchParams(items[0]!.body_text))).toEqual({
    message: "Please call me back <soon>",
    from: "Bob",
  });
  expect(elsewhere()).toEqual([]);
  expect(problems).toEqual([]);
});

/**
 * axe-core's serious and critical findings (with `every`, all of them) on the page at `url` (its script injected past
 * the page's CSP, in a context of its own).
 */
async function accessibilityProblems(url: string, every = false): Promise<string[]> {
  const axe = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
  const context = await browser.newContext({ bypassCSP: true });
  try {
    const page = await context.newPage();
    await page.goto(url);
    await page.addScriptTag({ content: axe });
    const violations = (await page.evaluate(
      "axe.run().then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: " +
        "v.nodes.length })))",
    )) as { id: string; impact: string; help: string; nodes: number }[];
    return violations
      .filter((v) => every || v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id}: ${v.help} (${v.nodes})`);
  } finally {
    await context.close();
  }
}

it(
  "a form: filled in by keyboard at phone width, kept and relayed; a filled honeypot is thanked and discarded; " +
    "no serious accessibility problem",
  async () => {
    const created = await fetch(`${server.url}/v1/forms`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        title: "Contact us",
        description: "We answer within a day.",
        webhook_url: `${receiver.url}/ok/pages-form`,
        fields: [
          { name: "name", label: "Your name", required: true },
          { name: "email", label: "E-mail", type: "email", required: true, help: "We only use it to answer you." },
          { name: "topic", label: "Topic", type: "select", options: ["Sales", "Support"], required: true },
          { name: "message", label: "Message", type: "textarea", required: true },
          { name: "agree", label: "You may contact me", type: "checkbox", required: true },
        ],
      }),
    });
    expect(created.status).toBe(201);
    const record = (await created.json()) as { id: string; management_token: string; urls: { public: string } };
    expect(await accessibilityProblems(record.urls.public)).toEqual([]);

    const context = await browser.newContext({ viewport: { width: 375, height: 740 }, isMobile: true, hasTouch: true });
    const { page, problems, elsewhere } = await watchedPage(context);
    expect((await page.goto(record.urls.public))?.status()).toBe(200);
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375);
    // By keyboard alone: Tab reaches each field in order (never the honeypot), Space checks the box, Enter sends.
    const focused = async () => page.evaluate("document.activeElement?.id ?? ''");
    await page.keyboard.press("Tab");
    expect(await focused()).toBe("f-name");
    await page.keyboard.type("Ada <Lovelace>");
    await page.keyboard.press("Tab");
    expect(await focused()).toBe("f-email");
    await page.keyboard.type("ada@example.com");
    await page.keyboard.press("Tab");
    expect(await focused()).toBe("f-topic");
    await page.selectOption("#f-topic", "Support");
    await page.keyboard.press("Tab");
    expect(await focused()).toBe("f-message");
    await page.keyboard.type("Please call me back.");
    await page.keyboard.press("Tab");
    expect(await focused()).toBe("f-agree");
    await page.keyboard.press("Space");
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement?.tagName")).toBe("BUTTON");
    await page.keyboard.press("Enter");
    await page.locator("#thanks").waitFor();
    await expect(page.locator("#thanks").textContent()).resolves.toBe("Thank you: your message was received.");

    // A bot fills what people never see: thanked alike, kept nowhere.
    await page.goto(record.urls.public);
    await page.fill("#f-name", "Bot");
    await page.fill("#f-email", "bot@example.com");
    await page.selectOption("#f-topic", "Sales");
    await page.fill("#f-message", "cheap pills");
    await page.check("#f-agree");
    await page
      .locator("#f-website")
      .evaluate((input) => void ((input as unknown as { value: string }).value = "http://spam.example"));
    await page.click("button[type=submit]");
    await page.locator("#thanks").waitFor();

    const auth = { authorization: `Bearer ${record.management_token}` };
    const list = (await (await fetch(`${server.url}/v1/forms/${record.id}/submissions`, { headers: auth })).json()) as {
      items: { data: Record<string, unknown> }[];
    };
    expect(list.items.map((i) => i.data)).toEqual([
      {
        name: "Ada <Lovelace>",
        email: "ada@example.com",
        topic: "Support",
        message: "Please call me back.",
        agree: true,
      },
    ]);
    expect(await (await fetch(`${server.url}/v1/forms/${record.id}`, { headers: auth })).json()).toEqual({
      submissions: 1,
      spam: 1,
      rate_limited: 0,
    });
    let relayed: { body: string }[] = [];
    for (let i = 0; i < 100 && !relayed.length; i++) {
      relayed = (await (await fetch(`${receiver.url}/_log/pages-form`)).json()) as { body: string }[];
      if (!relayed.length) await new Promise((r) => setTimeout(r, 100));
    }
    expect(JSON.parse(relayed[0]!.body)).toMatchObject({
      type: "forms.submission",
      data: { data: { name: "Ada <Lovelace>", topic: "Support" } },
    });
    expect(elsewhere()).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  },
);

it("an approval's page: approved with a comment, the record verifies (JWKS), a 2nd click changes nothing", async () => {
  const created = await fetch(`${server.url}/v1/approvals`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      title: "Deploy v2.3 to production?",
      description: "Changes:\n\n- **3 migrations**\n- new billing page\n\n<img src=x onerror=alert(1)>",
      timeout_seconds: 3600,
    }),
  });
  expect(created.status).toBe(201);
  const record = (await created.json()) as { id: string; management_token: string; urls: { public: string } };
  expect(await accessibilityProblems(record.urls.public)).toEqual([]);

  const { page, problems, elsewhere } = await watchedPage();
  const stale = await browser.newPage();
  await stale.goto(record.urls.public);
  expect((await page.goto(record.urls.public))?.status()).toBe(200);
  await expect(page.locator("h1").textContent()).resolves.toBe("Deploy v2.3 to production?");
  await expect(page.locator(".description li strong").textContent()).resolves.toBe("3 migrations");
  expect(await page.locator(".description img").count()).toBe(0);
  await page.fill("#comment", "Looks good <ship>");
  await page.click("button[value=approve]");
  await page.locator("#decision").waitFor();
  await expect(page.locator("#decision").textContent()).resolves.toContain(
    "Decided: Approve, through the request's own link",
  );

  // A second click, from the same page opened before the decision: the decision stands.
  await stale.click("button[value=deny]");
  await stale.locator("#decision").waitFor();
  await expect(stale.locator("#decision").textContent()).resolves.toContain(
    "Already decided: Approve, through the request's own link",
  );

  const got = (await (
    await fetch(`${server.url}/v1/approvals/${record.id}`, {
      headers: { authorization: `Bearer ${record.management_token}` },
    })
  ).json()) as { state: string; jws: string; decision: unknown };
  expect(got.state).toBe("approved");
  const verified = await compactVerify(got.jws, createRemoteJWKSet(new URL(`${server.url}/.well-known/jwks.json`)));
  expect(JSON.parse(new TextDecoder().decode(verified.payload))).toEqual(got.decision);
  expect(got.decision).toMatchObject({ option: "approve", comment: "Looks good <ship>", decided_by: "owner-link" });
  await stale.close();
  expect(elsewhere()).toEqual([]);
  expect(problems).toEqual([]);
});

it(
  "times on the approval, bin and escalation pages read in the reader's own time zone, " +
    "the UTC instant in <time datetime>",
  async () => {
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(res.status, await res.clone().text()).toBe(201);
      return (await res.json()) as { id: string; management_token: string; urls: { public: string } };
    };
    const approval = await post("/v1/approvals", { title: "Rotate the keys?", timeout_seconds: 7200 });
    const bin = await post("/v1/bins", {});
    await (await fetch(`${bin.urls.public}/hook`, { method: "POST", body: "x" })).body?.cancel();
    const auth = (r: { management_token: string }) => ({ authorization: `Bearer ${r.management_token}` });
    const { view_url } = (await (await fetch(`${server.url}/v1/bins/${bin.id}`, { headers: auth(bin) })).json()) as {
      view_url: string;
    };
    const policy = await post("/v1/escalations", {
      steps: [{ delay_seconds: 0, targets: [{ url: `${receiver.url}/ok/pages-times` }] }],
    });
    const incident = (await (
      await fetch(`${server.url}/v1/escalations/${policy.id}/incidents`, {
        method: "POST",
        headers: { ...auth(policy), "content-type": "application/json" },
        body: JSON.stringify({ title: "Disk almost full" }),
      })
    ).json()) as { ack_url: string };

    // A zone half an hour off any whole-hour offset, so the local time cannot pass for UTC by chance.
    const zone = "Asia/Kolkata";
    const context = await browser.newContext({
      locale: "en-US",
      timezoneId: zone,
      viewport: { width: 390, height: 800 },
    });
    const { page, problems, elsewhere } = await watchedPage(context);
    for (const url of [approval.urls.public, view_url, incident.ack_url]) {
      expect((await page.goto(url))?.status()).toBe(200);
      const shown = (await page.locator("time").evaluateAll((nodes) =>
        nodes.map((n) => ({
          datetime: n.getAttribute("datetime"),
          text: n.textContent,
          title: n.getAttribute("title"),
        })),
      )) as { datetime: string; text: string; title: string }[];
      expect(shown.length, url).toBeGreaterThan(0);
      for (const t of shown) {
        expect(new Date(t.datetime).toISOString()).toBe(t.datetime);
        const local = Object.fromEntries(
          new Intl.DateTimeFormat("en-US", { timeZone: zone, hour: "2-digit", minute: "2-digit" })
            .formatToParts(new Date(t.datetime))
            .map((p) => [p.type, p.value]),
        );
        expect(t.text, url).toMatch(new RegExp(`${local.hour}:${local.minute}(:\\d{2})? ${local.dayPeriod}`));
        expect(t.text).toMatch(/GMT\+5:30|IST/);
        expect(t.title).toMatch(/ UTC$/);
      }
      expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
      expect(await accessibilityProblems(url)).toEqual([]);
    }
    expect(elsewhere()).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  },
);

it("an OAuth flow via a real OpenID provider with PKCE: the person signs in, the agent gets the tokens", async () => {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const created = await fetch(`${server.url}/v1/oauth-callbacks`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      authorization_endpoint: `${issuer}/auth`,
      token_endpoint: `${issuer}/token`,
      client_id: "zeitvault-agent",
      client_secret: "a-long-client-secret-for-tests",
      scope: "openid email",
    }),
  });
  expect(created.status).toBe(201);
  const record = (await created.json()) as { id: string; management_token: string };
  const auth = { authorization: `Bearer ${record.management_token}` };
  const info = (await (await fetch(`${server.url}/v1/oauth-callbacks/${record.id}`, { headers: auth })).json()) as {
    redirect_uri: string;
    authorize_url: string;
  };
  const provider = await startOidcProvider(port, {
    client_id: "zeitvault-agent",
    client_secret: "a-long-client-secret-for-tests",
    redirect_uri: info.redirect_uri,
  });
  try {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(info.authorize_url);
    await page.fill("input[name=login]", "ada");
    await page.fill("input[name=password]", "anything");
    await page.click("button[type=submit]");
    await page.click("button[type=submit]"); // consent
    await page.locator("#result").waitFor();
    expect(page.url().startsWith(info.redirect_uri)).toBe(true);
    await expect(page.locator("h1").textContent()).resolves.toBe("You are signed in");
    const shown = await page.content();
    expect(await accessibilityProblems(info.redirect_uri)).toEqual([]); // the page a second visit gets

    const result = (await (
      await fetch(`${server.url}/v1/oauth-callbacks/${record.id}/result?wait_seconds=10`, { headers: auth })
    ).json()) as {
      status: string;
      code: string | null;
      tokens: { access_token: string; id_token: string; token_type: string };
    };
    expect(result).toMatchObject({ status: "completed", code: null, tokens: { token_type: "Bearer" } });
    for (const secret of [result.tokens.access_token, result.tokens.id_token]) expect(shown).not.toContain(secret);
    const { payload } = await jwtVerify(result.tokens.id_token, createRemoteJWKSet(new URL(`${issuer}/jwks`)), {
      issuer,
      audience: "zeitvault-agent",
    });
    expect(payload.sub).toBe("ada");
    await context.close();
  } finally {
    await provider.stop();
  }
});

it("an escalation's ack page: the link from the first step acknowledges by name, and the steps stop", async () => {
  const created = await fetch(`${server.url}/v1/escalations`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      steps: [
        { delay_seconds: 0, targets: [{ url: `${receiver.url}/ok/pages-escalation-1` }] },
        { delay_seconds: 60, targets: [{ url: `${receiver.url}/ok/pages-escalation-2` }] },
      ],
    }),
  });
  expect(created.status).toBe(201);
  const record = (await created.json()) as { id: string; management_token: string };
  const api = (path: string, body?: unknown) =>
    fetch(`${server.url}/v1/escalations/${record.id}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${record.management_token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const incident = (await (
    await api("/incidents", { title: "Disk almost full on db-1", details: "94% used, growing 1%/h" })
  ).json()) as { incident_id: string };

  let step: { data: { ack_url: string; incident_id: string } } | undefined;
  for (let i = 0; i < 100 && !step; i++) {
    const log = (await (await fetch(`${receiver.url}/_log/pages-escalation-1`)).json()) as { body: string }[];
    step = log[0] && JSON.parse(log[0].body);
    if (!step) await new Promise((r) => setTimeout(r, 100));
  }
  expect(step?.data.incident_id).toBe(incident.incident_id);
  expect(await accessibilityProblems(step!.data.ack_url)).toEqual([]);

  const { page, problems, elsewhere } = await watchedPage();
  await page.setViewportSize({ width: 390, height: 800 });
  expect((await page.goto(step!.data.ack_url))?.status()).toBe(200);
  await expect(page.locator("h1").textContent()).resolves.toBe("Disk almost full on db-1");
  await page.getByLabel("Your name (optional)").fill("Dana <on call>");
  await page.getByRole("button", { name: "Acknowledge" }).click();
  await page.getByRole("status").waitFor();
  await expect(page.getByRole("status").textContent()).resolves.toContain("Acknowledged by Dana <on call>");

  const after = (await (await api(`/incidents/${incident.incident_id}`)).json()) as {
    state: string;
    acknowledged_by: string;
    next_step_at: string | null;
    timeline: { event: string; by: string | null }[];
  };
  expect(after).toMatchObject({ state: "acknowledged", acknowledged_by: "Dana <on call>", next_step_at: null });
  expect(after.timeline.map((t) => t.event)).toEqual(["triggered", "step", "acknowledged"]);
  expect(elsewhere()).toEqual([]);
  expect(problems).toEqual([]);
});

it(
  "an error's type URI, opened in a browser: what it means and what to do, at phone width, " +
    "no serious accessibility problem",
  async () => {
    // (The free tier pays for calls here, so the problem at hand is a missing credential.)
    const refused = await fetch(`${server.url}/v1/credits/balance`);
    const { type } = (await refused.json()) as { type: string };
    expect(type).toBe(`${server.url}/errors/unauthorized`);
    expect(await accessibilityProblems(type)).toEqual([]);

    const { page, problems, elsewhere } = await watchedPage();
    await page.setViewportSize({ width: 390, height: 800 });
    const res = await page.goto(type);
    expect(res?.status()).toBe(200);
    expect(res?.headers()["content-security-policy"]).toContain("default-src 'none'");
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await expect(page.locator("h1").textContent()).resolves.toBe("Unauthorized");
    await expect(page.getByRole("heading", { name: "What to do" }).isVisible()).resolves.toBe(true);
    const forAgent = await fetch(type, { headers: { accept: "application/json" } });
    expect(await forAgent.json()).toMatchObject({
      code: "unauthorized",
      status: 401,
      what_to_do: expect.stringContaining("X-CREDIT-TOKEN"),
    });
    expect(elsewhere()).toEqual([]);
    expect(problems).toEqual([]);
  },
);
