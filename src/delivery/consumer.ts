/**
 * Consumer of the DELIVERIES queue and of its dead-letter queue. A failed
 * attempt is retried by the queue itself, delayed per the schedule; after the
 * last retry the queue moves the message to the dead-letter queue, whose
 * consumer records it as dead. Every attempt is written to the sending
 * resource's log (when the resource still exists), which answers whether this
 * message should go on: a message the resource has since sent again stops.
 * What each message did is also counted for the operator (pending, dead: one
 * D1 batch per queue batch, operator/delivery-stats.ts), never failing a delivery.
 */
import type { Env } from "../env";
import { resourceStub } from "../stubs";
import { attemptDelivery } from "./attempt";
import { isDeliveryMessage, isProbeMessage } from "./messages";
import { retryDelay } from "./schedule";
import { recordDeliveryEvents, type DeliveryEvent, type DeliveryStep } from "../operator/delivery-stats";

function stepOf(final: "delivered" | "aborted" | "dead" | null, retried: boolean): DeliveryStep {
  if (retried) return "retrying";
  if (final === "dead") return "dead";
  return final ? "settled" : "stopped";
}

export async function consumeDeliveries(
  batch: MessageBatch<unknown>,
  env: Env,
  _ctx?: ExecutionContext,
): Promise<void> {
  const dead = batch.queue.endsWith("-dlq");
  const events: DeliveryEvent[] = [];
  await Promise.all(
    batch.messages.map(async (message) => {
      const body = message.body;
      if (isProbeMessage(body)) {
        // The readiness report's proof that the queue accepts messages (src/operator/probes.ts).
        message.ack();
        return;
      }
      if (!isDeliveryMessage(body)) {
        console.error(`queue ${batch.queue}: dropping a message of unknown type`);
        message.ack();
        return;
      }
      const log = resourceStub(env, body.resourceId);
      const send = body.send ?? null;
      if (dead) {
        await log
          .recordDelivery({ deliveryId: body.deliveryId, send, attempt: null, final: "dead", retryInSeconds: null })
          .catch(() => undefined);
        message.ack();
        events.push({ deliveryId: body.deliveryId, resourceId: body.resourceId, step: "dead" });
        return;
      }
      const result = await attemptDelivery(env, body);
      const failed = result.outcome === "failed";
      const next = failed ? retryDelay(message.attempts, body.retryDelays) : null;
      // A custom schedule ends before the queue's own retries do: the delivery is dead here.
      const spent = failed && next === null && body.retryDelays !== undefined;
      const delay = failed && !spent ? Math.round((next ?? 0) * Number(env.DELIVERY_RETRY_SCALE)) : null;
      const final = result.outcome === "failed" ? (spent ? ("dead" as const) : null) : result.outcome;
      const report = {
        deliveryId: body.deliveryId,
        send,
        attempt: { at: Date.now(), ...result },
        final,
        retryInSeconds: delay,
      };
      // When the report cannot be written the message goes on: at least once.
      const goOn = await log.recordDelivery(report).catch(() => true);
      if (failed && goOn) message.retry({ delaySeconds: delay ?? 0 });
      else message.ack();
      events.push({ deliveryId: body.deliveryId, resourceId: body.resourceId, step: stepOf(final, failed && goOn) });
    }),
  );
  await recordDeliveryEvents(env.DB, events);
}
