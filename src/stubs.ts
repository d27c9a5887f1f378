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

export function accountStub(env: Env, accountId: string): AccountApi {
  return env.ACCOUNTS.get(env.ACCOUNTS.idFromName(accountId)) as unknown as AccountApi;
}

export function resourceStub(env: Env, resourceId: string): ResourceApi {
  return env.RESOURCES.get(env.RESOURCES.idFromName(resourceId)) as unknown as ResourceApi;
}
