/**
 * Office documents → PDF through LibreOffice, behind Gotenberg's `/forms/libreoffice/convert`: in
 * production the engines image as a Cloudflare Container, or real Gotenberg or the engines image at
 * `ENGINE_URL` (endpoint.ts); `scripts/engines.mjs` (Debian's LibreOffice) locally. Browser Rendering has
 * no office engine, so there is no second home here: without an engine a conversion answers 503 and charges nothing.
 */
import type { Env } from "../env";
import { AppError } from "../http/errors";
import { engineFetch } from "./endpoint";
import { enginePdf } from "./pdf";

/** LibreOffice's first start in a fresh container takes a while; a large spreadsheet too. */
export const OFFICE_TIMEOUT_MS = 120_000;

/** `extension`: how LibreOffice tells the format (docx, odt, xlsx, pptx, …). */
export function officeToPdf(env: Env, bytes: Uint8Array, extension: string): Promise<Uint8Array> {
  const send = engineFetch(env, "gotenberg");
  if (!send)
    throw new AppError(
      "engine_unavailable",
      "No document engine is configured here (ENGINE_CONTAINER or ENGINE_URL); nothing was charged.",
    );
  const form = new FormData();
  form.append("files", new Blob([bytes]), `document.${extension}`);
  return enginePdf(
    "LibreOffice",
    (signal) => send("/forms/libreoffice/convert", { method: "POST", body: form, signal }),
    OFFICE_TIMEOUT_MS,
  );
}
