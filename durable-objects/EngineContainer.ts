/**
 * The engines image (engines/Dockerfile: scripts/engines.mjs with chromium, LibreOffice, tesseract and
 * poppler) as a Cloudflare Container, when the block at the end of wrangler.toml is uncommented and
 * ENGINE_CONTAINER bound. One instance (src/engines/endpoint.ts names it) starts the container on its
 * first request, waits until the engines answer, and forwards each request to the container's port.
 * A fetch handler rather than RPC methods: what passes through is an HTTP request to a program that
 * speaks HTTP, its multipart body streamed and the caller's timeout with it. Only the runtime's own
 * container API (`ctx.container`): no helper package.
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../src/env";
import { ENGINE_CONTAINER_PORT } from "../src/engines/endpoint";
/** A cold start: the VM, Node, then the first answer. */
const READY_TIMEOUT_MS = 60_000;
const PROBE_TIMEOUT_MS = 5_000;
const PROBE_INTERVAL_MS = 300;

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));
/** 502: the engines behind this object failed, which src/engines/ reports as 503 engine_unavailable, uncharged. */
const failed = (detail: string) =>
  new Response(detail, { status: 502, headers: { "content-type": "text/plain; charset=utf-8" } });

export class EngineContainer extends DurableObject<Env> {
  /**
   * Settles once the running container's engines answer; cleared when it stops, so the next request starts it again.
   */
  private ready: Promise<void> | null = null;

  override async fetch(request: Request): Promise<Response> {
    const container = this.ctx.container;
    if (!container) return failed("EngineContainer has no container: wrangler.toml's [[containers]] block names it.");
    try {
      await this.started(container);
    } catch (err) {
      return failed(`The engines container did not start: ${message(err)}`);
    }
    try {
      return await container.getTcpPort(ENGINE_CONTAINER_PORT).fetch(request);
    } catch (err) {
      if (!container.running) this.ready = null;
      return failed(`The engines container did not answer: ${message(err)}`);
    }
  }

  private started(container: Container): Promise<void> {
    if (!container.running) {
      // Internet on: the chromium engine loads the pages it is asked to print (URLs the Worker's egress guard passed).
      container.start({ enableInternet: true });
      this.ready = null;
      container
        .monitor()
        .catch((err) => console.warn(`engines container stopped: ${message(err)}`))
        .finally(() => (this.ready = null));
    }
    return (this.ready ??= this.answering(container).catch((err) => {
      this.ready = null;
      throw err;
    }));
  }

  /** Until the engines answer /health (up or not: they listen), the container exits, or the start takes too long. */
  private async answering(container: Container): Promise<void> {
    const port = container.getTcpPort(ENGINE_CONTAINER_PORT);
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      try {
        const res = await port.fetch("http://engines/health", { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
        await res.body?.cancel();
        return;
      } catch (err) {
        if (!container.running) throw new Error(`it exited while starting (${message(err)})`);
        if (Date.now() > deadline)
          throw new Error(
            `nothing answered on port ${ENGINE_CONTAINER_PORT} within ${READY_TIMEOUT_MS / 1000} s (${message(err)})`,
          );
        await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS));
      }
    }
  }
}
