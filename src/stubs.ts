/**
 * The one place Durable Object stubs are resolved: tokens and ids name their object directly.
 * The stubs are typed with the objects' RPC surfaces (src/rpc/), which the classes implement:
 * every method takes and returns plain serializable data, so the RPC mapping would change
 * nothing but compile time.
 */
import type { Env } from "./env";
import type { AccountApi } from "./rpc/account";
import type { ResourceApi } from "./rpc/resource";

export type { AccountApi, ResourceApi };

/** Object ids by name, per namespace: deriving one is a hash in the runtime, on every call otherwise. Ids are plain values, not I/O, so they outlive the request that made them. */
type Namer = { idFromName(name: string): DurableObjectId };
const ids = new WeakMap<Namer, Map<string, DurableObjectId>>();
const MAX_IDS = 10_000;

function idOf(namespace: Namer, name: string): DurableObjectId {
  let known = ids.get(namespace);
  if (!known) ids.set(namespace, (known = new Map()));
  let id = known.get(name);
  if (!id) {
    known.set(name, (id = namespace.idFromName(name)));
    if (known.size > MAX_IDS) known.delete(known.keys().next().value!);
  }
  return id;
}

export function accountStub(env: Env, accountId: string): AccountApi {
  return env.ACCOUNTS.get(idOf(env.ACCOUNTS, accountId)) as unknown as AccountApi;
}

export function resourceStub(env: Env, resourceId: string): ResourceApi {
  return env.RESOURCES.get(idOf(env.RESOURCES, resourceId)) as unknown as ResourceApi;
}
