/**
 * Where the engines answer, in one place, so pdf, office and ocr only name a path. The engines image bound
 * as a Cloudflare Container (`ENGINE_CONTAINER`, durable-objects/EngineContainer.ts) serves every route;
 * without it, Gotenberg's routes go to `ENGINE_URL` and OCR to `OCR_ENGINE_URL` (else `ENGINE_URL`): real
 * Gotenberg has no OCR route, so beside it the OCR engine runs at an address of its own.
 */
import type { Env } from "../env";

/** The Gotenberg-compatible routes (chromium, LibreOffice), or the OCR engine's. */
export type EngineService = "gotenberg" | "ocr";

/** Sends one request to an engine: its path (`/forms/ocr`) and fetch's init. */
export type EngineFetch = (path: string, init?: RequestInit) => Promise<Response>;

/** The one container instance every engine request goes to (it runs requests concurrently; LibreOffice queues). */
export const ENGINE_CONTAINER_NAME = "engines";
/** The port the engines image listens on: engines/Dockerfile's ENGINE_PORT. */
export const ENGINE_CONTAINER_PORT = 3901;

/** How to reach `service`'s engine here, or null when none is configured. */
export function engineFetch(env: Env, service: EngineService): EngineFetch | null {
  if (env.ENGINE_CONTAINER) {
    const stub = env.ENGINE_CONTAINER.get(env.ENGINE_CONTAINER.idFromName(ENGINE_CONTAINER_NAME));
    // The host is a placeholder: the object forwards the path to the container's port.
    return (path, init) => stub.fetch(`http://engines${path}`, init);
  }
  const base = (service === "ocr" ? env.OCR_ENGINE_URL || env.ENGINE_URL : env.ENGINE_URL)?.replace(/\/$/, "");
  return base ? (path, init) => fetch(`${base}${path}`, init) : null;
}
