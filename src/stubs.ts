/**
 * The one place Durable Object stubs are resolved: tokens and ids name their object directly.
 * The stubs are typed with the objects' RPC surfaces (src/rpc/), which the classes implement:
 * every method takes and returns plain serializable data, so the RPC mapping would change
 * nothing but compile time.
 */
import type { Env } from "./env";
import { memoized } from "./memo";
import type { AccountApi } from "./rpc/account";
import type { ResourceApi } from "./rpc/resource";
import type { SandboxApi } from "./rpc/sandbox";

export type { AccountApi, ResourceApi, SandboxApi };

/**
 * Object ids by name, per namespace: deriving one is a hash in the runtime, on every call otherwise. Ids are plain
 * values, not I/O, so they outlive the request that made them.
 */
type Namer = { idFromName(name: string): DurableObjectId };
const idsOf = new WeakMap<Namer, (name: string) => DurableObjectId>();

function idOf(namespace: Namer, name: string): DurableObjectId {
  let ids = idsOf.get(namespace);
  if (!ids) idsOf.set(namespace, (ids = memoized((n: string) => namespace.idFromName(n), 10_000)));
  return ids(name);
}

export function accountStub(env: Env, accountId: string): AccountApi {
  return env.ACCOUNTS.get(idOf(env.ACCOUNTS, accountId)) as unknown as AccountApi;
}

/** A sandbox's object (docs/api.md#sandboxes): named by the sandbox's id. */
export function sandboxStub(env: Env, sandboxId: string): SandboxApi {
  return env.SANDBOXES.get(idOf(env.SANDBOXES, sandboxId)) as unknown as SandboxApi;
}

export function resourceStub(env: Env, resourceId: string): ResourceApi {
  return env.RESOURCES.get(idOf(env.RESOURCES, resourceId)) as unknown as ResourceApi;
}
