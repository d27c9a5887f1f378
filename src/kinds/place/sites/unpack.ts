/**
 * A site's zip, unpacked as it streams in: the archive is never held whole, only the file being
 * read (at most max_file_bytes), which goes to R2 before the next is taken. The archive is fed
 * to the inflater in small slices, so a zip bomb is caught (its ratio, its sizes) after a few
 * megabytes of output rather than after all of it. Paths are checked as they come: nothing
 * outside the site (zip slip), nothing ambiguous.
 */
import { Unzip, UnzipInflate } from "fflate";
import { AppError } from "../../../http/errors";
import { LIMITS } from "./schema";

/** Bytes of archive fed to the inflater at once: one slice inflates to at most ~1032 times its size. */
const SLICE = 16 * 1024;
/** Below this much output the ratio is not judged (a tiny archive of text is legitimately dense). */
const RATIO_FLOOR = 1_000_000;

export interface UnpackedFile {
  path: string;
  bytes: Uint8Array;
}

const invalid = (detail: string, path = "body") =>
  new AppError("validation_failed", detail, { errors: [{ path, message: detail }] });

/**
 * The path a zip entry stands for below the site, or null for one to skip (a folder, macOS
 * resource forks). Refuses what could escape or mislead: `..`, absolute and drive paths,
 * backslashes, control characters.
 */
export function sitePath(name: string): string | null {
  if (name.endsWith("/") || name.startsWith("__MACOSX/") || /(^|\/)\.DS_Store$/.test(name)) return null;
  const refuse = (why: string) => invalid(`The archive's entry "${name.slice(0, 200)}" ${why}.`);
  if (/[\u0000-\u001f\u007f\\]/.test(name)) throw refuse("has a control character or a backslash in its name");
  if (name.startsWith("/") || /^[A-Za-z]:/.test(name)) throw refuse("is an absolute path");
  const segments = name.split("/").filter((s) => s !== "" && s !== ".");
  if (segments.includes("..")) throw refuse("reaches outside the site (..)");
  const path = segments.join("/");
  if (path.length > LIMITS.max_path_chars) throw refuse(`has a path longer than ${LIMITS.max_path_chars} characters`);
  return path;
}

const concat = (chunks: Uint8Array[], size: number): Uint8Array => {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) (out.set(c, at), (at += c.length));
  return out;
};

/**
 * Reads the archive from `body`, handing each file to `keep` (in archive order) before reading on.
 * Throws a 422 naming what is wrong: not a zip, a bad path, a duplicate, a limit passed, a bomb.
 */
export async function unpack(
  body: ReadableStream<Uint8Array>,
  keep: (file: UnpackedFile) => Promise<void>,
): Promise<{ files: number; bytes: number; archiveBytes: number }> {
  let failure: AppError | null = null;
  let archiveBytes = 0;
  let inflated = 0;
  let files = 0;
  let completed = 0;
  const seen = new Set<string>();
  const ready: UnpackedFile[] = [];

  const unzip = new Unzip((file) => {
    if (failure) return;
    try {
      const path = sitePath(file.name);
      if (path === null) return;
      if (seen.has(path)) throw invalid(`The archive holds "${path}" twice.`);
      seen.add(path);
      if (++files > LIMITS.max_files) throw invalid(`The archive holds more than ${LIMITS.max_files} files.`);
      if (file.compression !== 0 && file.compression !== 8)
        throw invalid(
          `"${path}" is compressed with method ${file.compression}: only stored and deflated entries are read.`,
        );
      const chunks: Uint8Array[] = [];
      let size = 0;
      file.ondata = (err, data, final) => {
        if (failure) return;
        if (err) {
          failure = invalid(`"${path}" is damaged: ${err.message}`);
          return;
        }
        size += data.length;
        inflated += data.length;
        if (size > LIMITS.max_file_bytes)
          failure = invalid(`"${path}" is larger than ${LIMITS.max_file_bytes} bytes unpacked.`);
        else if (inflated > LIMITS.max_site_bytes)
          failure = invalid(`The site is larger than ${LIMITS.max_site_bytes} bytes unpacked.`);
        else if (inflated > RATIO_FLOOR && inflated > archiveBytes * LIMITS.max_ratio)
          failure = invalid(
            `The archive unpacks to more than ${LIMITS.max_ratio} times its size: refused as a zip bomb.`,
          );
        if (failure) return file.terminate();
        chunks.push(data);
        if (final) (completed++, ready.push({ path, bytes: concat(chunks, size) }));
      };
      file.start();
    } catch (err) {
      failure =
        err instanceof AppError
          ? err
          : invalid(`The archive could not be read: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  unzip.register(UnzipInflate);

  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      for (let at = 0; value && at < value.length && !failure; at += SLICE) {
        const slice = value.subarray(at, at + SLICE);
        archiveBytes += slice.length;
        try {
          unzip.push(slice, false);
        } catch (err) {
          failure = invalid(`The archive could not be read: ${err instanceof Error ? err.message : String(err)}`);
        }
        while (ready.length && !failure) await keep(ready.shift()!);
      }
      if (done && !failure) {
        try {
          unzip.push(new Uint8Array(0), true);
        } catch (err) {
          failure = invalid(`The archive could not be read: ${err instanceof Error ? err.message : String(err)}`);
        }
        while (ready.length && !failure) await keep(ready.shift()!);
      }
      if (failure) throw failure;
      if (done) break;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  if (files === 0) throw invalid("The body is not a zip archive with files in it.");
  if (completed !== files) throw invalid("The archive ended inside a file.");
  return { files, bytes: inflated, archiveBytes };
}
