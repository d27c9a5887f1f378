/**
 * Queueing a drip's messages: each serialised as it will be sent, and refused (413) when the backlog has no room.
 * Every message enters through `move` (messages.ts), which keeps the counters in step.
 */
import { utf8Length } from "../../../../bytes";
import { AppError } from "../../../../http/errors";
import type { EngineStore } from "../../../../kind/kind";
import { outgoingRequest } from "../../../../delivery/outbound";
import { MAX_BACKLOG, MAX_BACKLOG_BYTES, type DripConfig, type EnqueueInput } from "../schema";
import { bySeq, move, state, view, type MessageRow } from "./messages";

/** Header names in lower case, so a message's header replaces the drip's whatever their spelling. */
const lower = (h: Record<string, string>) =>
  Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));

/**
 * Queues messages in order, all or none (the operation's transaction rolls back on a refusal).
 * Each is serialised now, with the drip's headers and its content type, exactly as it will be sent.
 */
export function enqueue(store: EngineStore, config: DripConfig, inputs: EnqueueInput[]) {
  const out: ReturnType<typeof view>[] = [];
  let added = 0;
  for (const input of inputs) {
    if (input.dedup_id) {
      const earlier = store.sql
        .exec<MessageRow>("SELECT * FROM drip_messages WHERE dedup_id = ? AND status <> 'cancelled'", input.dedup_id)
        .toArray()[0];
      if (earlier) {
        out.push(view(earlier, true));
        continue;
      }
    }
    const request = outgoingRequest(
      {
        url: config.url,
        method: config.method,
        headers: { ...lower(config.headers), ...lower(input.headers) },
        body: input.body,
      },
      "",
    );
    const headers = JSON.stringify(request.headers);
    const bytes = utf8Length(request.body ?? "") + utf8Length(headers);
    checkRoom(store, bytes, inputs.length);
    const id = `msg_${crypto.randomUUID().replace(/-/g, "")}`;
    const seq = store.sql
      .exec<{ seq: number }>(
        "INSERT INTO drip_messages (message_id, dedup_id, body, headers, bytes, status, created_at) VALUES " +
          "(?, ?, ?, ?, ?, 'pending', ?) RETURNING seq",
        id,
        input.dedup_id ?? null,
        request.body,
        headers,
        bytes,
        store.now,
      )
      .one().seq;
    move(store, { seq, bytes }, null, "pending");
    out.push(view(bySeq(store, seq)));
    added += 1;
  }
  return { items: out, enqueued: added };
}

/** 413: the request is fine, but the backlog has no room for it; smaller batches or a wait for releases will fit. */
function checkRoom(store: EngineStore, bytes: number, batch: number): void {
  const s = state(store);
  const unfinished = s.pending + s.in_flight;
  const which = batch > 1 ? "This batch" : "This message";
  if (unfinished + 1 > MAX_BACKLOG) {
    throw new AppError(
      "payload_too_large",
      `${which} does not fit: a drip holds at most ${MAX_BACKLOG} unfinished messages and holds ${unfinished}.`,
    );
  }
  if (s.backlog_bytes + bytes > MAX_BACKLOG_BYTES) {
    throw new AppError(
      "payload_too_large",
      `${which} does not fit: unfinished messages may take ${MAX_BACKLOG_BYTES} bytes and take ${s.backlog_bytes}.`,
    );
  }
}
