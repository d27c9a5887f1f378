/**
 * Consumer of the DELIVERIES queue (and its dead-letter queue). Messages are a
 * discriminated union dispatched on `type`; the delivery pipeline (signing,
 * retry schedule, attempt log) plugs its message types in here.
 */
import type { Env } from "../env";

export type DeliveryMessage = { type: "noop" };

export async function consumeDeliveries(batch: MessageBatch<unknown>, _env: Env): Promise<void> {
  for (const message of batch.messages) {
    // No producer sends yet: anything arriving is acknowledged and logged rather than retried forever.
    console.warn(`queue ${batch.queue}: unhandled message type ${String((message.body as Partial<DeliveryMessage> | null)?.type)}`);
    message.ack();
  }
}
