/**
 * The engines image (engines/Dockerfile), which cannot be built here (no Docker): its Debian packages
 * are the list CI installs, installed by the same script; its npm packages are what scripts/engines.mjs
 * imports, pinned by the project's lock; what it copies passes .dockerignore and lands where the
 * repository has it; its CMD, run here with its ENV, answers Gotenberg's /health and /version and does
 * real work (HTML → PDF read back by poppler, then OCR of that PDF); and wrangler.toml's commented
 * container block, uncommented, passes `wrangler deploy --dry-run` (Docker stood in for by a script
 * that records the build it is asked for).
 */
import { execFile, spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENGINES } from "../../scripts/engines.mjs";
import { npmImports, subset } from "../../engines/npm-packages.mjs";
import { ENGINE_CONTAINER_PORT } from "../../src/engines/endpoint";
import { startPopplerPeer } from "../peers/poppler";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const read = (file: string) => readFile(path.join(ROOT, file), "utf8");

interface Instruction {
  op: string;
  args: string;
}

/** Dockerfile instructions, continuation lines joined and comments dropped. */
function instructions(dockerfile: string): Instruction[] {
  const out: Instruction[] = [];
  let current = "";
  for (const line of dockerfile.split("\n")) {
    if (/^\s*(#|$)/.test(line)) continue;
    const continued = /\\\s*$/.test(line);
    current += `${line.replace(/\\\s*$/, "")} `;
    if (continued) continue;
    const m = /^\s*(\w+)\s+(.*)$/.exec(current.trim())!;
    out.push({ op: m[1]!.toUpperCase(), args: m[2]!.trim() });
    current = "";
  }
  return out;
}

const dockerfile = instructions(await read("engines/Dockerfile"));
const all = (op: string) => dockerfile.filter((i) => i.op === op).map((i) => i.args);
/** ENV A=1 B=2 (no quoted values here). */
const dockerEnv: Record<string, string> = Object.fromEntries(
  all("ENV")
    .flatMap((a) => a.split(/\s+/))
    .map((kv) => kv.split("=") as [string, string]),
);
const cmd = JSON.parse(all("CMD").at(-1)!) as string[];
const workdir = all("WORKDIR").at(-1)!;
/** COPY sources → destination (flags such as --chown left out). */
const copies = all("COPY").map((a) => {
  const words = a.split(/\s+/).filter((w) => !w.startsWith("--"));
  return { sources: words.slice(0, -1), dest: words.at(-1)! };
});

describe("the engines image's definition", () => {
  it("is Debian bookworm with Node 20, installing the one package list CI installs, with the same script", async () => {
    expect(all("FROM")).toEqual([expect.stringMatching(/^node:20-bookworm(-slim)?$/)]);
    const list = "engines/debian-packages.txt";
    const installer = "engines/install-debian-packages.sh";
    expect(copies.some((c) => c.sources.includes(list) && c.sources.includes(installer))).toBe(true);
    expect(all("RUN").some((r) => r.includes(path.basename(installer)))).toBe(true);
    const ci = (await read(".ci/run"))
      .split("\n")
      .filter((l) => !l.trim().startsWith("#"))
      .join("\n");
    expect(ci).toMatch(new RegExp(`^${installer}$`, "m"));
    // Neither names an engine's package itself: the list is the only place.
    const packages = Object.values(ENGINES)
      .flatMap((e) => e.packages)
      .filter((p) => !p.startsWith("-"));
    for (const p of packages) {
      expect(ci, p).not.toMatch(new RegExp(`\\b${p}\\b`));
      expect(all("RUN").join("\n"), p).not.toMatch(new RegExp(`\\b${p}\\b`));
    }
    expect(all("RUN").join("\n")).not.toMatch(/apt-get\s+install/);
    // The engines scripts/engines.mjs reports are the list's.
    expect(Object.keys(ENGINES).sort()).toEqual(["chromium", "libreoffice", "pdftoppm", "tesseract"]);
  });

  it("installs each engine's listed packages (LibreOffice's without recommends); checks each arrived", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "apt-"));
    try {
      // The real list, each program moved to where the stand-in apt-get below creates it: every engine is missing.
      const list = (await read("engines/debian-packages.txt"))
        .split("\n")
        .map((line) => {
          const [engine, , ...packages] = line.replace(/#.*/, "").trim().split(/\s+/);
          return packages.length
            ? `${engine} ${dir}/${packages.find((p) => !p.startsWith("-"))} ${packages.join(" ")}`
            : line;
        })
        .join("\n");
      await writeFile(path.join(dir, "list.txt"), list);
      await writeFile(
        path.join(dir, "apt-get"),
        `#!/bin/sh\necho "$*" >> "${dir}/log"\nfor a in "$@"; do case "$a" in -*|install|update) ;; *) ` +
          `touch "${dir}/$a"; chmod +x "${dir}/$a" ;; esac; done\n`,
      );
      await chmod(path.join(dir, "apt-get"), 0o755);
      await promisify(execFile)(
        "sh",
        [path.join(ROOT, "engines/install-debian-packages.sh"), path.join(dir, "list.txt")],
        { env: { ...process.env, PATH: `${dir}:${process.env.PATH}` } },
      );
      const log = (await readFile(path.join(dir, "log"), "utf8")).trim().split("\n");
      expect(log).toEqual([
        "update -qq",
        ...Object.values(ENGINES).map((e) => `install -y -qq ${e.packages.join(" ")}`),
      ]);
      expect(ENGINES.libreoffice.packages[0]).toBe("--no-install-recommends");
      expect(ENGINES.chromium.packages).not.toContain("--no-install-recommends");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("installs the npm packages scripts/engines.mjs imports, pinned with integrity by the project's lock", async () => {
    const imports = npmImports(await read("scripts/engines.mjs"));
    expect(imports).toEqual(["playwright-core"]);
    const lock = JSON.parse(await read("package-lock.json"));
    const { packageJson, packageLock } = subset(JSON.parse(await read("package.json")), lock, imports);
    const locked = packageLock.packages as Record<string, { version?: string; integrity?: string; dev?: boolean }>;
    for (const name of imports) {
      const pinned = lock.packages[`node_modules/${name}`];
      expect(packageJson.dependencies[name]).toBe(pinned.version);
      expect(locked[`node_modules/${name}`]).toMatchObject({ version: pinned.version, integrity: pinned.integrity });
      expect(locked[`node_modules/${name}`]!.dev).toBeUndefined();
    }
    const runs = all("RUN").join("\n");
    expect(runs).toMatch(/node engines\/npm-packages\.mjs \S+ \/app/);
    expect(runs).toMatch(/npm ci --omit=dev/);
  });

  it("copies only what .dockerignore lets through, each runtime file to its repository path in WORKDIR", async () => {
    const ignore = (await read(".dockerignore"))
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith("#"));
    expect(ignore[0]).toBe("*");
    const allowed = new Set(ignore.filter((l) => l.startsWith("!")).map((l) => l.slice(1)));
    for (const file of allowed) expect(existsSync(path.join(ROOT, file)), file).toBe(true);
    for (const { sources } of copies) for (const s of sources) expect(allowed, s).toContain(s);
    expect(workdir).toBe("/app");
    // What the running program reads sits where it sits in the repository (cmd runs it from WORKDIR).
    for (const file of [cmd[1]!, "engines/debian-packages.txt"]) {
      expect(
        copies.some((c) => c.sources.includes(file) && c.dest === `${workdir}/${path.dirname(file)}/`),
        file,
      ).toBe(true);
    }
    expect(dockerEnv).toMatchObject({ ENGINE_HOST: "0.0.0.0", ENGINE_PORT: String(ENGINE_CONTAINER_PORT) });
    expect(all("EXPOSE")).toEqual([String(ENGINE_CONTAINER_PORT)]);
    expect(all("USER")).toEqual(["node"]);
  });
});

describe("the engines image's command, run here with its environment", () => {
  let child: ChildProcessWithoutNullStreams;
  let url: string;
  let poppler: Awaited<ReturnType<typeof startPopplerPeer>>;
  let exited: Promise<number | null>;

  beforeAll(async () => {
    expect(cmd[0]).toBe("node");
    poppler = await startPopplerPeer();
    // ENGINE_PORT 0: a free port, the one the engines print.
    child = spawn(process.execPath, cmd.slice(1), {
      cwd: ROOT,
      env: { ...process.env, ...dockerEnv, ENGINE_PORT: "0" },
    });
    exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
    url = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk;
        const m = /engines listening on (\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.stderr.on("data", (chunk: Buffer) => (out += chunk));
      child.once("exit", (code) => reject(new Error(`the engines exited (${code}): ${out}`)));
    });
  }, 60_000);

  afterAll(async () => {
    if (child && child.exitCode === null) child.kill("SIGKILL");
    await poppler?.stop();
  });

  it("answers Gotenberg's /health: up for every installed engine, on every address (ENGINE_HOST=0.0.0.0)", async () => {
    const res = await fetch(`${url}/health`);
    const body = (await res.json()) as {
      status: string;
      details: Record<string, { status: string; timestamp: string; error?: string }>;
    };
    const installed = Object.entries(ENGINES).map(([name, e]) => [name, existsSync(e.file)] as const);
    expect(res.status).toBe(installed.every(([, here]) => here) ? 200 : 503);
    expect(body.status).toBe(res.status === 200 ? "up" : "down");
    for (const [name, here] of installed) {
      expect(body.details[name], name).toMatchObject({
        status: here ? "up" : "down",
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
      if (!here) expect(body.details[name]!.error).toMatch(/apt-get install/);
    }
    expect((await fetch(`${url}/health`, { method: "HEAD" })).status).toBe(res.status);
    // Reached on a non-loopback address too, when this machine has one.
    const external = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === "IPv4" && !a.internal);
    if (external)
      expect((await fetch(`http://${external.address}:${new URL(url).port}/health`)).status).toBe(res.status);
  });

  it("answers Gotenberg's /version: plain text, the project's version, then the installed programs'", async () => {
    const res = await fetch(`${url}/version`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await res.text();
    const { version } = JSON.parse(await read("package.json")) as { version: string };
    expect(text.startsWith(version)).toBe(true);
    for (const [name, e] of Object.entries(ENGINES))
      if (existsSync(e.file)) expect(text).toMatch(new RegExp(`${name} \\d+\\.\\d+`));
  });

  it("prints HTML to a PDF whose text poppler reads, and reads that PDF back by OCR", async () => {
    const form = new FormData();
    form.append(
      "files",
      new Blob(['<p style="font: 40px sans-serif">Engines image 4711</p>'], { type: "text/html" }),
      "index.html",
    );
    const res = await fetch(`${url}/forms/chromium/convert/html`, { method: "POST", body: form });
    expect(res.status, res.status === 200 ? "" : await res.text()).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/pdf");
    const pdf = new Uint8Array(await res.arrayBuffer());
    const text = await (await fetch(`${poppler.url}/pdftotext`, { method: "POST", body: pdf })).text();
    expect(text).toContain("Engines image 4711");

    const ocr = new FormData();
    ocr.append("files", new Blob([pdf], { type: "application/pdf" }), "input");
    ocr.append("languages", "eng");
    const recognized = await fetch(`${url}/forms/ocr`, { method: "POST", body: ocr });
    expect(recognized.status, recognized.status === 200 ? "" : await recognized.text()).toBe(200);
    const seen = (await recognized.json()) as {
      pages: { text: string; words: { text: string; confidence: number }[] }[];
    };
    expect(seen.pages[0]!.text.replace(/\s+/g, " ")).toContain("Engines image 4711");
  });

  it("stops on SIGTERM, as a container's first process must", async () => {
    child.kill("SIGTERM");
    expect(
      await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve("still running"), 10_000))]),
    ).toBe(0);
  });
});

describe("wrangler.toml's commented container block", () => {
  it("uncommented, passes `wrangler deploy --dry-run`: binding, class, the image from the repo root", async () => {
    const toml = await read("wrangler.toml");
    const start = toml.indexOf("\n# [[containers]]");
    expect(start).toBeGreaterThan(0);
    // The block runs to the first blank line: what follows (the deployed environments) stays as it is.
    const end = toml.indexOf("\n\n", start + 1);
    const block = toml
      .slice(start, end)
      .split("\n")
      .map((l) => (l === "#" ? "" : l.replace(/^# /, "")))
      .join("\n");
    expect(block).toMatch(
      /class_name = "EngineContainer"[\s\S]*name = "ENGINE_CONTAINER"[\s\S]*new_sqlite_classes = \["EngineContainer"\]/,
    );
    const dir = await mkdtemp(path.join(tmpdir(), "containers-"));
    // Beside wrangler.toml, so its relative paths (main, assets, the Dockerfile) resolve the same.
    const config = path.join(ROOT, `.containers-check-${process.pid}.toml`);
    try {
      await writeFile(config, toml.slice(0, start) + block + toml.slice(end));
      await writeFile(
        path.join(dir, "docker"),
        `#!/bin/sh\necho "$*" >> "${dir}/log"\n[ "$1" = build ] && cat > "${dir}/Dockerfile"\nexit 0\n`,
      );
      await chmod(path.join(dir, "docker"), 0o755);
      const { stdout } = await promisify(execFile)(
        path.join(ROOT, "node_modules/.bin/wrangler"),
        ["deploy", "--dry-run", "--outdir", path.join(dir, "out"), "-c", config],
        {
          cwd: ROOT,
          env: { ...process.env, WRANGLER_DOCKER_BIN: path.join(dir, "docker"), WRANGLER_SEND_METRICS: "false" },
          timeout: 120_000,
        },
      );
      expect(stdout).toMatch(/env\.ENGINE_CONTAINER \(EngineContainer\)\s+Durable Object/);
      expect(stdout).toContain(path.join(ROOT, "engines/Dockerfile"));
      const log = await readFile(path.join(dir, "log"), "utf8");
      expect(log).toMatch(new RegExp(`^build .* -f - ${ROOT}$`, "m"));
      expect(await readFile(path.join(dir, "Dockerfile"), "utf8")).toBe(await read("engines/Dockerfile"));
    } finally {
      await rm(config, { force: true });
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
