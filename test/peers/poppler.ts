/**
 * A local peer that reads PDFs with Debian's poppler-utils, for the worker tests (workerd cannot
 * spawn processes): POST the PDF's bytes to /pdftotext (`pdftotext -layout`) or /pdfinfo, and the
 * answer is the tool's output as text; to /pdftoppm?format=png|jpeg|tiff, and it is the first page as
 * that image (150 dpi): pictures of known text for the OCR tests. 422 with the error output on failure.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { debianFile } from "./debian";

const TOOLS: Record<string, (file: string) => string[]> = {
  "/pdftotext": (file) => ["pdftotext", "-layout", file, "-"],
  "/pdfinfo": (file) => ["pdfinfo", file],
};

export async function startPopplerPeer(): Promise<{ url: string; stop: () => Promise<void> }> {
  debianFile("/usr/bin/pdftotext", ["poppler-utils"], "reading the PDFs the tests make");
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://poppler");
    const format = url.searchParams.get("format") ?? "png";
    const image = url.pathname === "/pdftoppm" && ["png", "jpeg", "tiff"].includes(format);
    const tool = TOOLS[url.pathname];
    if (req.method !== "POST" || (!tool && !image)) return void res.writeHead(404).end();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const dir = await mkdtemp(path.join(tmpdir(), "poppler-"));
    try {
      const file = path.join(dir, "in.pdf");
      await writeFile(file, Buffer.concat(chunks));
      if (image) {
        const out = path.join(dir, "page");
        const made = await new Promise<boolean>((resolve) =>
          execFile("pdftoppm", ["-r", "150", `-${format}`, "-singlefile", file, out], { timeout: 20_000 }, (err) =>
            resolve(!err),
          ),
        );
        const ext = format === "jpeg" ? "jpg" : format === "tiff" ? "tif" : "png";
        return void res
          .writeHead(made ? 200 : 422, { "content-type": `image/${format}` })
          .end(made ? await readFile(`${out}.${ext}`) : undefined);
      }
      const [cmd, ...args] = tool!(file);
      const out = await new Promise<{ ok: boolean; text: string }>((resolve) =>
        execFile(cmd!, args, { timeout: 20_000 }, (err, stdout, stderr) =>
          resolve({ ok: !err, text: err ? `${stderr}${err.message}` : stdout }),
        ),
      );
      res.writeHead(out.ok ? 200 : 422, { "content-type": "text/plain; charset=utf-8" }).end(out.text);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
