/**
 * Progress of a call that waits (a long-poll, a render), for a client that sent a progressToken:
 * the answer becomes an event stream scoped to the request (Streamable HTTP, 2025-03-26 on) that
 * carries `notifications/progress` once a second, then the response, then ends. What a wait
 * measures is time: the work itself (a Durable Object waiting for a change, an engine rendering)
 * reports nothing until it is done, so the progress is the seconds waited, out of `wait_seconds`
 * for a long-poll. Nothing is resumable (no event ids): a broken stream loses the answer, and the
 * client asks again (with the same idempotency_key, a paid call is not charged twice).
 */
import type { ProgressSink } from "./context";

const TICK_MS = 1000;

type Message = Record<string, unknown>;

/** Runs `work`, telling `sink` how long it has waited: at once, then every second until it settles. */
export async function withProgress<T>(
  sink: ProgressSink,
  total: number | undefined,
  work: () => Promise<T>,
): Promise<T> {
  const started = Date.now();
  const say = (seconds: number) => `Waiting: ${seconds} s${total ? ` of at most ${total} s` : ""}.`;
  sink(0, total, say(0));
  let last = 0;
  const timer = setInterval(() => {
    const seconds = Math.floor((Date.now() - started) / TICK_MS);
    if (seconds <= last) return; // progress must grow with every notification
    last = seconds;
    sink(seconds, total, say(seconds));
  }, TICK_MS);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

export function progressNotification(
  token: string | number,
  progress: number,
  total: number | undefined,
  message: string,
): Message {
  return {
    jsonrpc: "2.0",
    method: "notifications/progress",
    params: { progressToken: token, progress, ...(total !== undefined ? { total } : {}), message },
  };
}

/**
 * An SSE answer: `answer` gets a `send` for the notifications it emits on the way, and resolves to
 * the response, written last. A client that closes the stream has cancelled (2026-07-28 says so;
 * earlier revisions let it drop): nothing more is written, and the call, already running inside
 * its resource, completes or fails there without a reader.
 */
export function eventStream(
  answer: (send: (message: Message) => void) => Promise<Message>,
  waitUntil?: (p: Promise<unknown>) => void,
): Response {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  const encoder = new TextEncoder();
  let open = true;
  const write = (message: Message) => {
    if (!open) return;
    writer.write(encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`)).catch(() => (open = false));
  };
  const done = answer(write)
    .then(write)
    .finally(() => {
      if (open) writer.close().catch(() => undefined);
      open = false;
    });
  waitUntil?.(done.catch(() => undefined));
  return new Response(readable, {
    status: 200,
    // X-Accel-Buffering: a reverse proxy (nginx) in front would otherwise hold the events back.
    headers: { "Content-Type": "text/event-stream", "Cache-Control": "no-store", "X-Accel-Buffering": "no" },
  });
}
