/**
 * The one place Durable Object stubs are resolved: tokens and ids name their object directly.
 * The stubs are typed with the objects' own public methods: every method already takes and
 * returns plain serializable data, so the RPC mapping would change nothing but compile time.
 */
import type { Env } from "./env";
import type { AccountObject } from "../durable-objects/AccountObject";
import type { ResourceObject } from "../durable-objects/ResourceObject";

type RpcMethods<T> = { [K in keyof T as T[K] extends (...args: never[]) => unknown ? K : never]: T[K] };

export type AccountApi = Omit<RpcMethods<AccountObject>, "fetch" | "alarm" | "webSocketMessage" | "webSocketClose" | "webSocketError">;
export type ResourceApi = Omit<RpcMethods<ResourceObject>, "fetch" | "alarm" | "webSocketMessage" | "webSocketClose" | "webSocketError">;

export function accountStub(env: Env, accountId: string): AccountApi {
  return env.ACCOUNTS.get(env.ACCOUNTS.idFromName(accountId)) as unknown as AccountApi;
}

export function resourceStub(env: Env, resourceId: string): ResourceApi {
  return env.RESOURCES.get(env.RESOURCES.idFromName(resourceId)) as unknown as ResourceApi;
}
