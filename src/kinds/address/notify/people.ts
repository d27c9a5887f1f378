/**
 * "Notify these people", for any kind: a kind names one of the owner's notify resources in its
 * create body (by that resource's management token, which proves the owner holds it; only its id
 * is kept), and raises alerts with `notifyPeople`. The alert is a relay (src/delivery/relay.ts):
 * staged in the raising kind's transaction, retried like any delivery, and sent once by the
 * notify resource through all its channels.
 */
import { z } from "@hono/zod-openapi";
import { sendRelay } from "../../../delivery/relay";
import type { Env } from "../../../env";
import { checkOwnedResource } from "../../../kind/owned";
import type { EngineStore } from "../../../kind/kind";
import { managementTokenOf, singleLine } from "../../../openapi/schemas";
import { FORMATS, PRIORITIES } from "./channels/message";
import { MAX_BODY_CHARS } from "./schema";

/** A create field naming a notify resource by its management token. */
export const notifyTarget = (what: string) =>
  managementTokenOf(["notify"], "must be a notify resource's management token (zvm_…)")
    .nullable()
    .default(null)
    .describe(
      `A notify resource's management token: ${what} go to its channels too (only its id is kept, and the ` +
        `record shows that).`,
    );

/** Checks at create that `token` is the management token of an active notify resource; answers its id. */
export const checkNotifyTarget = (env: Env, token: string, field: string): Promise<string> =>
  checkOwnedResource(env, token, ["notify"], field);

/** What a relayed alert carries: a send's message, checked again where it arrives. */
export const relayedMessage = z
  .object({
    title: singleLine(250).nullable(),
    body: z.string().min(1).max(MAX_BODY_CHARS),
    format: z.enum(FORMATS),
    priority: z.enum(PRIORITIES),
    tags: z.array(singleLine(64)).max(10),
  })
  .strict();
export type RelayedMessage = z.infer<typeof relayedMessage>;

/**
 * Sends `message` to the people of notify resource `notifyId`, once per `uniqueBy` (what makes this alert this alert).
 */
export function notifyPeople(store: EngineStore, notifyId: string, message: RelayedMessage, uniqueBy: string): string {
  return sendRelay(store, notifyId, "notify.relay", message, uniqueBy);
}
