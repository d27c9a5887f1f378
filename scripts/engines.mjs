#!/usr/bin/env node
/**
 * The local engines: real Debian programs behind the HTTP API the Worker speaks to an engine in production: on loopback
 * for `npm run dev` and the tests, and as the engines image (engines/Dockerfile).
 *
 *   POST /forms/chromium/convert/html  Gotenberg's route: multipart `files` (index.html; header.html,
 *   POST /forms/chromium/convert/url   footer.html) or field `url`, with Gotenberg's fields (paperWidth,
 *                                      paperHeight, margin*, landscape, printBackground, scale,
 *                                      waitDelay, waitForSelector) → application/pdf, by Debian's chromium
 *                                      (driven by playwright-core, which downloads no browser of its own).
 *   POST /forms/libreoffice/convert    Gotenberg's route: multipart `files` (one document: .docx, .doc, .odt,
 *                                      .rtf, .xlsx, .xls, .ods, .pptx, .ppt, .odp, by its file name) →
 *                                      application/pdf, by Debian's LibreOffice (`soffice --headless
 *                                      --convert-to pdf`, one at a time).
 *   POST /forms/ocr                    multipart `files` (one image: PNG, JPEG, TIFF, WebP; or a PDF, each page
 *                                      rasterized by poppler's pdftoppm at 200 dpi) and `languages` (`eng+deu`) →
 *                                      JSON `{ languages, pages: [{ page, width, height, text, words: [{ text,
 *                                      confidence, left, top, width, height }] }] }`, by Debian's tesseract (TSV).
 *   GET  /ocr/languages                `{ languages }`: the tesseract languages installed.
 *   GET  /health                       Gotenberg's shape: `{ status: "up" | "down", details: { chromium: {
 *                                      status, timestamp, error? }, tesseract, pdftoppm, libreoffice } }`, 503
 *                                      when one is down (not installed: its error says the command that
 *                                      installs it).
 *   GET  /version                      Gotenberg's shape (text/plain): the project's version, then the
 *                                      programs' (`1.0.0 (chromium 156.0.8078.108; tesseract 5.3.0; …)`).
 *
 * On Cloudflare the same program runs as the engines image (engines/Dockerfile) in a Cloudflare Container or on any
 * host, or Gotenberg serves the Gotenberg routes; Browser Rendering can print PDFs instead (src/engines/).
 *
 * Run directly: `node scripts/engines.mjs` listens on ENGINE_HOST (default 127.0.0.1; the image sets 0.0.0.0) and
 * ENGINE_PORT (default 3901).
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createServer } from "node:http";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const SELECTOR_TIMEOUT_MS = 10_000;

/**
 * Each engine: the file that shows it is installed, and the apt-get arguments that install it, read from
 * engines/debian-packages.txt, the list CI and the image install from.
 * @type {Record<"chromium" | "tesseract" | "pdftoppm" | "libreoffice", { file: string; packages: string[] }>}
 */
export const ENGINES = Object.fromEntries(
  readFileSync(path.join(ROOT, "engines/debian-packages.txt"), "utf8")
    .split("\n")
    .map((line) => line.replace(/#.*/, "").trim().split(/\s+/))
    .filter((fields) => fields.length >= 3)
    .map(([name, file, ...packages]) => [name, { file, packages }]),
);
const CHROMIUM = ENGINES.chromium.file;
/** One apt-get per engine: LibreOffice's --no-install-recommends must not reach the others. */
const INSTALL_HINT = (names) =>
  names.map((n) => `sudo apt-get install -y ${ENGINES[n].packages.join(" ")}`).join(" && ");

export function missingEngines() {
  return Object.entries(ENGINES)
    .filter(([, e]) => !existsSync(e.file))
    .map(([name]) => name);
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
/** Why chromium would not start, until it does: /health reports it. */
let browserFault = null;
/**
 * One browser, launched on first use and again after it exited or would not start: a long-running image must
 * not keep a dead one. An exit is no fault (the next render starts it); a failed start is.
 */
const browserReady = () =>
  (browser ??= chromium
    .launch({
      executablePath: CHROMIUM,
      // --disable-dev-shm-usage: a container's /dev/shm is small (Docker's 64 MB), and a long page would crash the
      // renderer.
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    })
    .then(
      (b) => {
        browserFault = null;
        b.on("disconnected", () => (browser = undefined));
        return b;
      },
      (err) => {
        browserFault = `chromium would not start: ${String(err instanceof Error ? err.message : err).slice(0, 300)}`;
        browser = undefined;
        throw err;
      },
    ));

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
        top: length(form.get("marginTop"), "0.39in"),
        bottom: length(form.get("marginBottom"), "0.39in"),
        left: length(form.get("marginLeft"), "0.39in"),
        right: length(form.get("marginRight"), "0.39in"),
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
    return {
      status: /Timeout/i.test(String(err)) ? 503 : 400,
      text: String(err instanceof Error ? err.message : err).slice(0, 500),
    };
  } finally {
    await page.close().catch(() => undefined);
  }
}

const run = (cmd, args, timeout = 60_000) =>
  new Promise((resolve) =>
    execFile(cmd, args, { timeout, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve({ ok: !err, stdout, stderr: `${stderr}${err ? err.message : ""}` }),
    ),
  );

async function tesseractLanguages() {
  const out = await run("tesseract", ["--list-langs"]);
  return out.stdout
    .split("\n")
    .slice(1)
    .map((l) => l.trim())
    .filter((l) => /^[A-Za-z_]+$/.test(l) && l !== "osd");
}

/**
 * tesseract's TSV: level 1 rows give the page's size, level 5 rows the words; lines and paragraphs rebuild the text.
 */
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
    p.words.push({
      text,
      confidence: Math.max(0, Number(conf)),
      left: Number(left),
      top: Number(top),
      width: Number(width),
      height: Number(height),
    });
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
  if (!/^[A-Za-z_]+(\+[A-Za-z_]+)*$/.test(languages))
    return { status: 400, text: "languages: names joined by +, such as eng+deu." };
  const installed = await tesseractLanguages();
  const unknown = languages.split("+").filter((l) => !installed.includes(l));
  if (unknown.length)
    return { status: 400, text: `Not installed here: ${unknown.join(", ")} (installed: ${installed.join(", ")}).` };
  const dir = await mkdtemp(path.join(tmpdir(), "ocr-"));
  try {
    const bytes = Buffer.from(await file.arrayBuffer());
    const input = path.join(dir, "input");
    await writeFile(input, bytes);
    let images = [input];
    if (bytes.subarray(0, 5).toString("latin1") === "%PDF-") {
      const raster = await run("pdftoppm", ["-r", "200", "-png", input, path.join(dir, "page")]);
      if (!raster.ok) return { status: 400, text: `The PDF could not be read: ${raster.stderr.slice(0, 300)}` };
      images = (await readdir(dir))
        .filter((f) => f.startsWith("page"))
        .sort()
        .map((f) => path.join(dir, f));
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
  if (!file || !OFFICE.test(file.name))
    return {
      status: 400,
      text: "Send one document as `files`, named with its extension (.docx, .odt, .xlsx, .pptx, …).",
    };
  const turn = officeQueue.then(async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "office-"));
    try {
      const input = path.join(dir, `document${path.extname(file.name).toLowerCase()}`);
      await writeFile(input, Buffer.from(await file.arrayBuffer()));
      const out = await run(
        "soffice",
        [
          `-env:UserInstallation=file://${profile}`,
          "--headless",
          "--norestore",
          "--convert-to",
          "pdf",
          "--outdir",
          dir,
          input,
        ],
        120_000,
      );
      const made = (await readdir(dir)).find((f) => f.endsWith(".pdf"));
      if (!made)
        return {
          status: 400,
          text: `The document could not be converted: ${(out.stderr || out.stdout).slice(0, 300)}`,
        };
      return { status: 200, pdf: await readFile(path.join(dir, made)) };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
  officeQueue = turn.then(
    () => undefined,
    () => undefined,
  );
  return turn;
}

/** Gotenberg's health answer, one detail per engine: down when it is not installed, or chromium will not run. */
function health() {
  const missing = missingEngines();
  const timestamp = new Date().toISOString();
  const details = Object.fromEntries(
    Object.keys(ENGINES).map((name) => {
      const error = missing.includes(name)
        ? `not installed: ${INSTALL_HINT([name])}`
        : name === "chromium"
          ? browserFault
          : null;
      return [name, error ? { status: "down", timestamp, error } : { status: "up", timestamp }];
    }),
  );
  return { status: Object.values(details).every((d) => d.status === "up") ? "up" : "down", details };
}

/** How each program tells its version (first line of its output); chromium's wrapper also writes noise to stderr. */
const VERSION_ARGS = {
  chromium: ["--version"],
  tesseract: ["--version"],
  pdftoppm: ["-v"],
  libreoffice: ["--version"],
};
let versions;
/** The project's version, then each installed program's: asked once, they do not change under a running process. */
const version = () =>
  (versions ??= Promise.all(
    Object.entries(ENGINES).map(async ([name, engine]) => {
      if (!existsSync(engine.file) || !VERSION_ARGS[name]) return null;
      const out = await run(engine.file, VERSION_ARGS[name], 20_000);
      const found = /\d+(?:\.\d+)+/.exec(
        `${out.stdout}\n${out.stderr}`.split("\n").find((l) => /\d+\.\d+/.test(l)) ?? "",
      );
      return found ? `${name} ${found[0]}` : null;
    }),
  ).then((programs) => {
    const project = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")).version;
    const known = programs.filter(Boolean);
    return known.length ? `${project} (${known.join("; ")})` : project;
  }));

async function handle(req, res) {
  const url = new URL(req.url, "http://engines");
  const answer = (status, body, type = "text/plain; charset=utf-8") => {
    res.writeHead(status, { "content-type": type });
    res.end(body);
  };
  if ((req.method === "GET" || req.method === "HEAD") && url.pathname === "/health") {
    const body = health();
    return answer(
      body.status === "up" ? 200 : 503,
      req.method === "HEAD" ? undefined : JSON.stringify(body),
      "application/json",
    );
  }
  if (req.method === "GET" && url.pathname === "/version") return answer(200, await version());
  if (req.method === "GET" && url.pathname === "/ocr/languages") {
    if (missingEngines().includes("tesseract"))
      return answer(503, `tesseract is not installed: ${INSTALL_HINT(["tesseract"])}`);
    return answer(200, JSON.stringify({ languages: await tesseractLanguages() }), "application/json");
  }
  if (req.method === "POST" && url.pathname === "/forms/libreoffice/convert") {
    if (missingEngines().includes("libreoffice"))
      return answer(503, `LibreOffice is not installed: ${INSTALL_HINT(["libreoffice"])}`);
    const form = await new Request("http://engines/", {
      method: "POST",
      headers: req.headers,
      body: Readable.toWeb(req),
      duplex: "half",
    })
      .formData()
      .catch(() => null);
    if (!form) return answer(400, "The body must be multipart/form-data.");
    const out = await officePdf(form);
    return out.pdf ? answer(200, out.pdf, "application/pdf") : answer(out.status, out.text);
  }
  if (req.method === "POST" && url.pathname === "/forms/ocr") {
    const missing = missingEngines().filter((n) => n === "tesseract" || n === "pdftoppm");
    if (missing.length) return answer(503, `Not installed: ${INSTALL_HINT(missing)}`);
    const form = await new Request("http://engines/", {
      method: "POST",
      headers: req.headers,
      body: Readable.toWeb(req),
      duplex: "half",
    })
      .formData()
      .catch(() => null);
    if (!form) return answer(400, "The body must be multipart/form-data.");
    const out = await recognize(form);
    return out.json ? answer(200, JSON.stringify(out.json), "application/json") : answer(out.status, out.text);
  }
  const route = /^\/forms\/chromium\/convert\/(html|url)$/.exec(url.pathname);
  if (req.method !== "POST" || !route) return answer(404, "No such route.");
  if (missingEngines().includes("chromium"))
    return answer(503, `chromium is not installed: ${INSTALL_HINT(["chromium"])}`);
  const form = await new Request("http://engines/", {
    method: "POST",
    headers: req.headers,
    body: Readable.toWeb(req),
    duplex: "half",
  })
    .formData()
    .catch(() => null);
  if (!form) return answer(400, "The body must be multipart/form-data.");
  const target = route[1] === "url" ? form.get("url") : null;
  if (route[1] === "url" && typeof target !== "string") return answer(400, "url is required.");
  const out = await printPdf(form, target);
  if (out.pdf) return answer(200, out.pdf, "application/pdf");
  return answer(out.status, out.text);
}

/** Starts the engines, on loopback unless `host` says otherwise (the image: 0.0.0.0); `port` 0 picks a free one. */
export async function startEngines({ port = 0, host = "127.0.0.1" } = {}) {
  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(err));
    });
  });
  await new Promise((resolve, reject) => server.once("error", reject).listen(port, host, resolve));
  const address = server.address();
  // A wildcard address is reached on loopback from this host.
  const reach = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "[::1]" : host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${reach}:${address.port}`,
    missing: missingEngines(),
    installHint: (names) => INSTALL_HINT(names),
    stop: async () => {
      await new Promise((resolve) => server.close(resolve));
      const open = browser;
      browser = undefined;
      if (open) await open.then((b) => b.close()).catch(() => undefined);
      await rm(profile, { recursive: true, force: true });
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const engines = await startEngines({
    port: Number(process.env.ENGINE_PORT ?? 3901),
    host: process.env.ENGINE_HOST || "127.0.0.1",
  });
  console.log(`engines listening on ${engines.url}`);
  if (engines.missing.length)
    console.warn(
      `missing engines: ${engines.missing.join(", ")}; install them with: ${engines.installHint(engines.missing)}`,
    );
  // In the image this is the container's first process: a stop (SIGTERM) must end it, chromium with it.
  for (const signal of ["SIGTERM", "SIGINT"])
    process.once(signal, () => void engines.stop().finally(() => process.exit(0)));
}
