/**
 * Consumer of the DELIVERIES queue and of its dead-letter queue. A failed
 * attempt is retried by the queue itself, delayed per the schedule; after the
 * last retry the queue moves the message to the dead-letter queue, whose
 * consumer records it as dead. Every attempt is written to the sending
 * resource's log (when the resource still exists).
 */
import type { Env } from "../env";
import { resourceStub } from "../stubs";
import { attemptDelivery } from "./attempt";
import { isDeliveryMessage } from "./messages";
import { retryDelay } from "./schedule";

export async function consumeDeliveries(batch: MessageBatch<unknown>, env: Env, _ctx?: ExecutionContext): Promise<void> {
  const dead = batch.queue.endsWith("-dlq");
  await Promise.all(
    batch.messages.map(async (message) => {
      const body = message.body;
      if (!isDeliveryMessage(body)) {
        console.error(`queue ${batch.queue}: dropping a message of unknown type`);
        message.ack();
        return;
      }
      const log = resourceStub(env, body.resourceId);
      if (dead) {
        await log.recordDelivery({ deliveryId: body.deliveryId, attempt: null, final: "dead" }).catch(() => undefined);
        message.ack();
        return;
      }
      const result = await attemptDelivery(env, body);
      const delay = result.outcome === "failed" ? Math.round((retryDelay(message.attempts) ?? 0) * Number(env.DELIVERY_RETRY_SCALE)) : null;
      await log
        .recordDelivery({ deliveryId: body.deliveryId, attempt: { number: message.attempts, at: Date.now(), ...result }, final: result.outcome === "failed" ? null : result.outcome })
        .catch(() => undefined);
      if (result.outcome === "failed") message.retry({ delaySeconds: delay ?? 0 });
      else message.ack();
    }),
  );
}
