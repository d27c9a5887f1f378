#!/usr/bin/env node
/**
 * The local engines: real Debian programs behind the HTTP API the Worker speaks to an engine in
 * production, on loopback, for `npm run dev` and the tests.
 *
 *   POST /forms/chromium/convert/html  Gotenberg's route: multipart `files` (index.html; header.html,
 *   POST /forms/chromium/convert/url   footer.html) or field `url`, with Gotenberg's fields (paperWidth,
 *                                      paperHeight, margin*, landscape, printBackground, scale,
 *                                      waitDelay, waitForSelector) → application/pdf, by Debian's chromium
 *                                      (driven by playwright-core, which downloads no browser of its own).
 *   POST /forms/libreoffice/convert     Gotenberg's route: multipart `files` (one document: .docx, .doc, .odt, .rtf, .xlsx,
 *                                      .xls, .ods, .pptx, .ppt, .odp, by its file name) → application/pdf, by Debian's
 *                                      LibreOffice (`soffice --headless --convert-to pdf`, one at a time).
 *   POST /forms/ocr                     multipart `files` (one image: PNG, JPEG, TIFF, WebP; or a PDF, each page
 *                                      rasterized by poppler's pdftoppm at 200 dpi) and `languages` (`eng+deu`) →
 *                                      JSON `{ languages, pages: [{ page, width, height, text, words: [{ text,
 *                                      confidence, left, top, width, height }] }] }`, by Debian's tesseract (TSV).
 *   GET  /ocr/languages                 `{ languages }`: the tesseract languages installed.
 *   GET  /health                        which engines are here, and the command that installs the rest.
 *
 * On Cloudflare the same routes are a Gotenberg the operator runs (a Container, or any URL), or the
 * Worker uses Browser Rendering instead (src/engines/).
 *
 * Run directly: `node scripts/engines.mjs` listens on ENGINE_PORT (default 3901).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createServer } from "node:http";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const CHROMIUM = "/usr/bin/chromium";
const SELECTOR_TIMEOUT_MS = 10_000;
/** Each engine: the file that shows it is installed, and the Debian packages that install it. */
export const ENGINES = {
  chromium: { file: CHROMIUM, packages: ["chromium"] },
  tesseract: { file: "/usr/bin/tesseract", packages: ["tesseract-ocr", "tesseract-ocr-eng"] },
  pdftoppm: { file: "/usr/bin/pdftoppm", packages: ["poppler-utils"] },
  libreoffice: { file: "/usr/bin/soffice", packages: ["libreoffice-writer-nogui", "libreoffice-calc-nogui", "libreoffice-impress-nogui"] },
};
const INSTALL_HINT = (names) => `sudo apt-get install -y ${names.flatMap((n) => ENGINES[n].packages).join(" ")}`;

export function missingEngines() {
  return Object.entries(ENGINES).filter(([, e]) => !existsSync(e.file)).map(([name]) => name);
}

/** Gotenberg's lengths: a number is inches; `in`, `pt`, `px`, `mm`, `cm` as written. */
function length(value, fallback) {
  if (value === null || value === "") return fallback;
  return /^[0-9.]+$/.test(value) ? `${value}in` : value;
}

/** `500ms`, `2s`, `1m` → ms (Gotenberg's durations). */
function duration(value) {
  const m = /^([0-9.]+)(ms|s|m)$/.exec(value ?? "");
  if (!m) return 0;
  return Number(m[1]) * { ms: 1, s: 1000, m: 60_000 }[m[2]];
}

let browser;
const browserReady = () => (browser ??= chromium.launch({
  executablePath: CHROMIUM,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
}));

async function printPdf(form, url) {
  const page = await (await browserReady()).newPage();
  try {
    const timeout = 30_000;
    const file = async (name) => {
      const entry = form.getAll("files").find((f) => typeof f !== "string" && f.name === name);
      return entry ? await entry.text() : null;
    };
    if (url) {
      const res = await page.goto(url, { waitUntil: "load", timeout });
      if (res && res.status() >= 400) return { status: 409, text: `The page answered ${res.status()}.` };
    } else {
      const html = await file("index.html");
      if (html === null) return { status: 400, text: "index.html is required." };
      await page.setContent(html, { waitUntil: "load", timeout });
    }
    const selector = form.get("waitForSelector");
    // Gotenberg gives up (503) when the selector does not show within its API timeout; this engine, sooner.
    if (selector) await page.waitForSelector(selector, { state: "visible", timeout: SELECTOR_TIMEOUT_MS });
    const delay = duration(form.get("waitDelay"));
    if (delay) await page.waitForTimeout(delay);
    const header = await file("header.html");
    const footer = await file("footer.html");
    const pdf = await page.pdf({
      width: length(form.get("paperWidth"), "8.5in"),
      height: length(form.get("paperHeight"), "11in"),
      margin: {
        top: length(form.get("marginTop"), "0.39in"), bottom: length(form.get("marginBottom"), "0.39in"),
        left: length(form.get("marginLeft"), "0.39in"), right: length(form.get("marginRight"), "0.39in"),
      },
      landscape: form.get("landscape") === "true",
      printBackground: form.get("printBackground") === "true",
      scale: form.get("scale") ? Number(form.get("scale")) : 1,
      displayHeaderFooter: header !== null || footer !== null,
      headerTemplate: header ?? "<span></span>",
      footerTemplate: footer ?? "<span></span>",
    });
    return { status: 200, pdf };
  } catch (err) {
    return { status: /Timeout/i.test(String(err)) ? 503 : 400, text: String(err instanceof Error ? err.message : err).slice(0, 500) };
  } finally {
    await page.close().catch(() => undefined);
  }
}


const run = (cmd, args, timeout = 60_000) =>
  new Promise((resolve) => execFile(cmd, args, { timeout, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => resolve({ ok: !err, stdout, stderr: `${stderr}${err ? err.message : ""}` })));

async function tesseractLanguages() {
  const out = await run("tesseract", ["--list-langs"]);
  return out.stdout.split("\n").slice(1).map((l) => l.trim()).filter((l) => /^[A-Za-z_]+$/.test(l) && l !== "osd");
}

/** tesseract's TSV: level 1 rows give the page's size, level 5 rows the words; lines and paragraphs rebuild the text. */
function parseTsv(tsv, pageOffset) {
  const pages = new Map();
  for (const line of tsv.split("\n").slice(1)) {
    const f = line.split("\t");
    if (f.length < 12) continue;
    const [level, page, block, par, lineNo, , left, top, width, height, conf, ...rest] = f;
    const n = Number(page) + pageOffset;
    if (!pages.has(n)) pages.set(n, { page: n, width: 0, height: 0, lines: new Map(), words: [] });
    const p = pages.get(n);
    if (level === "1") Object.assign(p, { width: Number(width), height: Number(height) });
    const text = rest.join("\t").trim();
    if (level !== "5" || text === "") continue;
    p.words.push({ text, confidence: Math.max(0, Number(conf)), left: Number(left), top: Number(top), width: Number(width), height: Number(height) });
    const key = `${block}.${par}.${lineNo}`;
    p.lines.set(key, [...(p.lines.get(key) ?? []), text]);
  }
  return [...pages.values()].map(({ lines, ...p }) => {
    const paragraphs = new Map();
    for (const [key, words] of lines) {
      const para = key.split(".").slice(0, 2).join(".");
      paragraphs.set(para, [...(paragraphs.get(para) ?? []), words.join(" ")]);
    }
    return { ...p, text: [...paragraphs.values()].map((ls) => ls.join("\n")).join("\n\n") };
  });
}

async function recognize(form) {
  const file = form.getAll("files").find((f) => typeof f !== "string");
  if (!file) return { status: 400, text: "Send the image or PDF as `files`." };
  const languages = String(form.get("languages") ?? "eng");
  if (!/^[A-Za-z_]+(\+[A-Za-z_]+)*$/.test(languages)) return { status: 400, text: "languages: names joined by +, such as eng+deu." };
  const installed = await tesseractLanguages();
  const unknown = languages.split("+").filter((l) => !installed.includes(l));
  if (unknown.length) return { status: 400, text: `Not installed here: ${unknown.join(", ")} (installed: ${installed.join(", ")}).` };
  const dir = await mkdtemp(path.join(tmpdir(), "ocr-"));
  try {
    const bytes = Buffer.from(await file.arrayBuffer());
    const input = path.join(dir, "input");
    await writeFile(input, bytes);
    let images = [input];
    if (bytes.subarray(0, 5).toString("latin1") === "%PDF-") {
      const raster = await run("pdftoppm", ["-r", "200", "-png", input, path.join(dir, "page")]);
      if (!raster.ok) return { status: 400, text: `The PDF could not be read: ${raster.stderr.slice(0, 300)}` };
      images = (await readdir(dir)).filter((f) => f.startsWith("page")).sort().map((f) => path.join(dir, f));
    }
    const pages = [];
    for (const [i, image] of images.entries()) {
      const out = await run("tesseract", [image, "stdout", "-l", languages, "tsv"]);
      if (!out.ok) return { status: 400, text: `The image could not be read: ${out.stderr.slice(0, 300)}` };
      pages.push(...parseTsv(out.stdout, images.length > 1 ? i : 0));
    }
    return { status: 200, json: { languages: languages.split("+"), pages } };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const OFFICE = /\.(docx|doc|odt|rtf|xlsx|xls|ods|pptx|ppt|odp)$/i;
/** LibreOffice keeps one profile per process and converts badly in parallel: one conversion at a time. */
let officeQueue = Promise.resolve();
const profile = path.join(tmpdir(), `engines-lo-${process.pid}`);

async function officePdf(form) {
  const file = form.getAll("files").find((f) => typeof f !== "string");
  if (!file || !OFFICE.test(file.name)) return { status: 400, text: "Send one document as `files`, named with its extension (.docx, .odt, .xlsx, .pptx, …)." };
  const turn = officeQueue.then(async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "office-"));
    try {
      const input = path.join(dir, `document${path.extname(file.name).toLowerCase()}`);
      await writeFile(input, Buffer.from(await file.arrayBuffer()));
      const out = await run("soffice", [`-env:UserInstallation=file://${profile}`, "--headless", "--norestore", "--convert-to", "pdf", "--outdir", dir, input], 120_000);
      const made = (await readdir(dir)).find((f) => f.endsWith(".pdf"));
      if (!made) return { status: 400, text: `The document could not be converted: ${(out.stderr || out.stdout).slice(0, 300)}` };
      return { status: 200, pdf: await readFile(path.join(dir, made)) };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
  officeQueue = turn.then(() => undefined, () => undefined);
  return turn;
}

async function handle(req, res) {
  const url = new URL(req.url, "http://engines");
  const answer = (status, body, type = "text/plain; charset=utf-8") => {
    res.writeHead(status, { "content-type": type });
    res.end(body);
  };
  if (req.method === "GET" && url.pathname === "/health") {
    const missing = missingEngines();
    return answer(200, JSON.stringify({ engines: Object.fromEntries(Object.keys(ENGINES).map((n) => [n, !missing.includes(n)])), install: missing.length ? INSTALL_HINT(missing) : null }), "application/json");
  }
  if (req.method === "GET" && url.pathname === "/ocr/languages") {
    if (missingEngines().includes("tesseract")) return answer(503, `tesseract is not installed: ${INSTALL_HINT(["tesseract"])}`);
    return answer(200, JSON.stringify({ languages: await tesseractLanguages() }), "application/json");
  }
  if (req.method === "POST" && url.pathname === "/forms/libreoffice/convert") {
    if (missingEngines().includes("libreoffice")) return answer(503, `LibreOffice is not installed: ${INSTALL_HINT(["libreoffice"])}`);
    const form = await new Request("http://engines/", { method: "POST", headers: req.headers, body: Readable.toWeb(req), duplex: "half" }).formData().catch(() => null);
    if (!form) return answer(400, "The body must be multipart/form-data.");
    const out = await officePdf(form);
    return out.pdf ? answer(200, out.pdf, "application/pdf") : answer(out.status, out.text);
  }
  if (req.method === "POST" && url.pathname === "/forms/ocr") {
    const missing = missingEngines().filter((n) => n === "tesseract" || n === "pdftoppm");
    if (missing.length) return answer(503, `Not installed: ${INSTALL_HINT(missing)}`);
    const form = await new Request("http://engines/", { method: "POST", headers: req.headers, body: Readable.toWeb(req), duplex: "half" }).formData().catch(() => null);
    if (!form) return answer(400, "The body must be multipart/form-data.");
    const out = await recognize(form);
    return out.json ? answer(200, JSON.stringify(out.json), "application/json") : answer(out.status, out.text);
  }
  const route = /^\/forms\/chromium\/convert\/(html|url)$/.exec(url.pathname);
  if (req.method !== "POST" || !route) return answer(404, "No such route.");
  if (missingEngines().includes("chromium")) return answer(503, `chromium is not installed: ${INSTALL_HINT(["chromium"])}`);
  const form = await new Request("http://engines/", { method: "POST", headers: req.headers, body: Readable.toWeb(req), duplex: "half" }).formData().catch(() => null);
  if (!form) return answer(400, "The body must be multipart/form-data.");
  const target = route[1] === "url" ? form.get("url") : null;
  if (route[1] === "url" && typeof target !== "string") return answer(400, "url is required.");
  const out = await printPdf(form, target);
  if (out.pdf) return answer(200, out.pdf, "application/pdf");
  return answer(out.status, out.text);
}

/** Starts the engines on loopback; `port` 0 picks a free one. */
export async function startEngines({ port = 0 } = {}) {
  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(err));
    });
  });
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  const address = server.address();
  return {
    url: `http://127.0.0.1:${address.port}`,
    missing: missingEngines(),
    installHint: (names) => INSTALL_HINT(names),
    stop: async () => {
      await new Promise((resolve) => server.close(resolve));
      if (browser) await (await browser).close().catch(() => undefined);
      browser = undefined;
      await rm(profile, { recursive: true, force: true });
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const engines = await startEngines({ port: Number(process.env.ENGINE_PORT ?? 3901) });
  console.log(`engines listening on ${engines.url}`);
  if (engines.missing.length) console.warn(`missing engines: ${engines.missing.join(", ")}; install them with: ${engines.installHint(engines.missing)}`);
}
