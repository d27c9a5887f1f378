/**
 * The Place family's pages and sites in a real browser (Debian's Chromium through playwright-core)
 * on a real `wrangler dev`: what a person sees is the owner's text, styled by the site's own files,
 * nothing loads from another origin, and an owner's scripts (inline or a site's modules) run only
 * when opted in, and then sandboxed (no storage of this origin). A rendered PDF (the local engines)
 * is opened in the browser with pdf.js, Firefox's PDF reader, and read back by its text.
 */
import { strToU8, zipSync } from "fflate";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { readFile } from "node:fs/promises";
import { startEngines } from "../../scripts/engines.mjs";
import { startWranglerDev } from "../../scripts/wrangler-dev.mjs";
import { launchChromium } from "../peers/chromium";

let server: Awaited<ReturnType<typeof startWranglerDev>>;
let browser: Browser;
let engines: Awaited<ReturnType<typeof startEngines>>;

beforeAll(async () => {
  engines = await startEngines();
  // The anonymous free tier pays for what this test creates.
  [server, browser] = await Promise.all([
    startWranglerDev({ vars: { FREE_CALLS_PER_DAY: "40", ENGINE_URL: engines.url } }),
    launchChromium(),
  ]);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await engines?.stop();
});

async function created(
  kind: string,
  body: Record<string, unknown>,
): Promise<{ id: string; management_token: string; urls: { public: string } }> {
  const res = await fetch(`${server.url}/v1/${kind}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { id: string; management_token: string; urls: { public: string } };
}

const create = async (kind: string, body: Record<string, unknown>): Promise<string> =>
  (await created(kind, body)).urls.public;

/** A site made and deployed from `files`; its public address. */
async function deployedSite(config: Record<string, unknown>, files: Record<string, string>): Promise<string> {
  const site = await created("sites", config);
  const archive = zipSync(Object.fromEntries(Object.entries(files).map(([path, text]) => [path, strToU8(text)])));
  const res = await fetch(`${server.url}/v1/sites/${site.id}/deploy`, {
    method: "PUT",
    body: archive,
    headers: { authorization: `Bearer ${site.management_token}`, "content-type": "application/zip" },
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return site.urls.public;
}

/** Opens `url`, recording requests to other origins that went out (`elsewhere`) or were blocked, and script errors. */
async function open(url: string) {
  const page = await browser.newPage();
  const elsewhere: string[] = [];
  const blocked: string[] = [];
  const errors: string[] = [];
  const foreign = (u: string) => !/^(data|blob):/.test(u) && new URL(u).origin !== new URL(server.url).origin;
  page.on("requestfinished", (req) => {
    if (foreign(req.url())) elsewhere.push(req.url());
  });
  page.on("requestfailed", (req) => {
    if (foreign(req.url())) blocked.push(`${req.url()} ${req.failure()?.errorText}`);
  });
  page.on("pageerror", (err) => void errors.push(err.message));
  const res = await page.goto(url, { waitUntil: "load" });
  return { page, res, elsewhere, blocked, errors };
}

const SCRIPTED = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Demo</title></head><body>
<h1>Status board</h1><p id="state">static</p><img src="https://example.com/tracker.png" alt="">
<script>
  let state = "ran";
  try { localStorage.setItem("k", "v"); state += ", storage reachable"; } catch { state += ", sandboxed"; }
  document.getElementById("state").textContent = state;
</script></body></html>`;

it("a Markdown page shows the owner's text, its markup in the source shown as text", async () => {
  const url = await create("pages", {
    content: "# Weekly numbers\n\nSales rose **12%**.\n\n<b>not bold</b>",
    description: "Numbers.",
  });
  const { page, res, elsewhere, errors } = await open(url);
  expect(res?.status()).toBe(200);
  await expect(page.title()).resolves.toBe("Weekly numbers");
  await expect(page.locator("h1").textContent()).resolves.toBe("Weekly numbers");
  const text = await page.locator("main").innerText();
  expect(text).toContain("Sales rose 12%.");
  expect(text).toContain("<b>not bold</b>");
  expect(elsewhere).toEqual([]);
  expect(errors).toEqual([]);
  await page.close();
});

it("an HTML page's script runs only if opted in, and then sandboxed; nothing loads from elsewhere", async () => {
  const off = await open(await create("pages", { format: "html", content: SCRIPTED }));
  await expect(off.page.locator("h1").textContent()).resolves.toBe("Status board");
  await expect(off.page.locator("#state").textContent()).resolves.toBe("static");
  expect(off.elsewhere).toEqual([]);
  expect(off.blocked).toEqual(["https://example.com/tracker.png csp"]);
  await off.page.close();

  const on = await open(await create("pages", { format: "html", content: SCRIPTED, scripts: true, title: "Board" }));
  await expect(on.page.title()).resolves.toBe("Board");
  await expect(on.page.locator("#state").textContent()).resolves.toBe("ran, sandboxed");
  expect(on.elsewhere).toEqual([]);
  expect(on.errors).toEqual([]);
  await on.page.close();
});

const SITE = {
  "index.html":
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Site</title>` +
    `<link rel="stylesheet" href="assets/site.css">\n<script type="module" src="assets/app.js"></script></head>` +
    `<body><h1>Deployed</h1><p id="state">static</p><p><a href="docs/">Docs</a></p></body></html>`,
  "assets/site.css": "h1 { color: rgb(0, 128, 128); }",
  "assets/app.js": "import { word } from './word.js'; document.getElementById('state').textContent = word;",
  "assets/word.js": "export const word = 'module ran';",
  "docs/index.html": "<!doctype html><title>Docs</title><h1>The docs</h1>",
};

it("a site: its page, stylesheet, module scripts from its files (scripts opted in), its links followed", async () => {
  const { page, res, elsewhere, errors } = await open(await deployedSite({ scripts: true }, SITE));
  expect(res?.status()).toBe(200);
  await expect(page.locator("h1").textContent()).resolves.toBe("Deployed");
  await expect(page.evaluate("getComputedStyle(document.querySelector('h1')).color")).resolves.toBe("rgb(0, 128, 128)");
  await page.locator("#state", { hasText: "module ran" }).waitFor({ timeout: 10_000 });
  await page.click("text=Docs");
  await expect(page.locator("h1").textContent()).resolves.toBe("The docs");
  expect(elsewhere).toEqual([]);
  expect(errors).toEqual([]);
  await page.close();
});

it("a site without scripts: styled, but its scripts never run", async () => {
  const { page, elsewhere } = await open(await deployedSite({}, SITE));
  await expect(page.evaluate("getComputedStyle(document.querySelector('h1')).color")).resolves.toBe("rgb(0, 128, 128)");
  await page.waitForTimeout(300);
  await expect(page.locator("#state").textContent()).resolves.toBe("static");
  expect(elsewhere).toEqual([]);
  await page.close();
});

it("a PDF the pdf kind rendered opens in the browser with its text and pages", async () => {
  const pdf = await created("pdf", {});
  const html =
    `<h1>Quarterly report</h1><p>Revenue grew twelve percent</p><p style="page-break-before: always">Second ` +
    `page: outlook</p>`;
  const res = await fetch(`${server.url}/v1/pdf/${pdf.id}/renders`, {
    method: "POST",
    headers: { authorization: `Bearer ${pdf.management_token}`, "content-type": "application/json" },
    body: JSON.stringify({ html }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  const { content_url, pages } = (await res.json()) as { content_url: string; pages: number };
  expect(pages).toBe(2);
  const bytes = Buffer.from(await (await fetch(content_url)).arrayBuffer());
  // pdf.js and the PDF served to the page from one made-up origin (playwright's routing), so nothing else is reached.
  const files: Record<string, [string, Buffer | string]> = {
    "/": [
      "text/html",
      `<!doctype html><title>reader</title><pre id="text"></pre><script type="module">
      import * as pdfjs from "/pdf.min.mjs";
      pdfjs.GlobalWorkerOptions.workerSrc = "/pdf.worker.min.mjs";
      const doc = await pdfjs.getDocument({ url: "/doc.pdf" }).promise;
      const texts = [];
      for (let n = 1; n <= doc.numPages; n++) {
        const content = await (await doc.getPage(n)).getTextContent();
        texts.push(content.items.map((i) => i.str).join(" "));
      }
      document.getElementById("text").textContent = JSON.stringify({ pages: doc.numPages, texts });
    </script>`,
    ],
    "/pdf.min.mjs": ["text/javascript", await readFile("node_modules/pdfjs-dist/build/pdf.min.mjs")],
    "/pdf.worker.min.mjs": ["text/javascript", await readFile("node_modules/pdfjs-dist/build/pdf.worker.min.mjs")],
    "/doc.pdf": ["application/pdf", bytes],
  };
  const page = await browser.newPage();
  await page.route("http://reader.test/**", (route) => {
    const file = files[new URL(route.request().url()).pathname];
    return file ? route.fulfill({ status: 200, contentType: file[0], body: file[1] }) : route.fulfill({ status: 404 });
  });
  const errors: string[] = [];
  page.on("pageerror", (err) => void errors.push(err.message));
  page.on("console", (msg) => void (msg.type() === "error" && errors.push(msg.text())));
  page.on("requestfailed", (req) => void errors.push(`failed: ${req.url()} ${req.failure()?.errorText}`));
  await page.goto("http://reader.test/");
  await page
    .waitForFunction('document.getElementById("text").textContent !== "" || undefined', null, { timeout: 30_000 })
    .catch((err: Error) => {
      throw new Error(`${err.message}\n${errors.join("\n")}`);
    });
  const read = JSON.parse((await page.textContent("#text"))!) as { pages: number; texts: string[] };
  expect(read.pages).toBe(2);
  expect(read.texts[0]).toContain("Quarterly report");
  expect(read.texts[0]).toContain("Revenue grew twelve percent");
  expect(read.texts[1]).toContain("Second page: outlook");
  await page.close();
});
