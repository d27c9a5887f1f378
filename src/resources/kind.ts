/**
 * What a kind is: the contract every kind module fills in and the registry
 * drives. Routing, the OpenAPI document, the price list, the MCP tool list and
 * the generic lifecycle tests are all generated from these definitions.
 */
import type { z } from "@hono/zod-openapi";
import type { Env } from "../env";
import type { Json, JsonObject } from "../json";

export type Family = "time" | "address" | "memory" | "place" | "watching" | "utilities";

/** An HTTP request a kind sends out (a wakeup's call, a schedule's tick): signed and retried by the delivery pipeline. */
export interface OutgoingRequest {
  url: string;
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  headers: Record<string, string>;
  body: string | null;
  /** What this request is, for the attempt log (e.g. "wakeup.fired"). */
  eventType: string;
}

/** What an engine sees inside its ResourceObject. */
export interface EngineStore {
  readonly resourceId: string;
  readonly sql: SqlStorage;
  readonly env: Env;
  /** Current time in Unix ms (one reading per call, so an operation sees one instant). */
  readonly now: number;
  /** When the resource was created, and when it expires (as of now), Unix ms. */
  readonly createdAt: number;
  readonly expiresAt: number;
  /**
   * Queues an outbound request, sent once the engine's transaction has committed (so a
   * refused or rolled-back operation sends nothing). Returns its delivery id.
   */
  send(request: OutgoingRequest): string;
}

/**
 * A data-plane operation at `/v1/{kind}/{id}{path}`. `run` executes synchronously
 * inside a SQLite transaction of the resource's Durable Object, so it is atomic and
 * can be dry-run before charging (a refused operation is never charged).
 */
export interface OpDefinition<Config = unknown, In = unknown, Out extends Json = Json> {
  name: string;
  method: "get" | "post" | "put" | "delete";
  /** Suffix below `/v1/{kind}/{id}`; "" for the resource itself. */
  path: string;
  summary: string;
  priceMicro: number;
  /** Request body (POST/PUT) or query (GET/DELETE). */
  input: z.ZodType<In>;
  output: z.ZodType<Out>;
  /** Status codes other than 2xx this operation may answer (besides the common ones). */
  errors?: number[];
  run(store: EngineStore, config: Config, input: In): Out;
}

export interface KindDefinition<Config = unknown> {
  kind: string;
  family: Family;
  title: string;
  summary: string;
  /** Kind-specific create fields; the common ones (ttl_seconds, label, notify_url) are added by the registry. */
  createSchema: z.ZodType<Config>;
  /** Price of one day of life; create and extend charge it per started day. */
  dayPriceMicro: number;
  defaultTtlSeconds: number;
  maxTtlSeconds: number;
  ops: OpDefinition<Config, unknown, Json>[];
  /** Refuses a create whose config does not fit its lifetime (e.g. a wakeup after expiry), before payment. */
  checkCreate?(config: Config, expiresAt: number, now: number): void;
  /** Creates the kind's tables and first state. */
  init(store: EngineStore, config: Config): void;
  /** Counters shown in the record's `usage`. */
  usage(store: EngineStore, config: Config): JsonObject;
  /** Kind-specific progress shown as the record's `status`. */
  status?(store: EngineStore, config: Config): JsonObject;
  /** Everything the resource holds, for `GET /v1/resources/{id}/export`. */
  exportData(store: EngineStore, config: Config): Json;
  /**
   * The requests a kind sends on its own, by event type (e.g. "wakeup.fired": what it is). Their bodies are
   * what the caller configured; they are signed like events, listed under the OpenAPI `webhooks`, and a kind
   * with such requests gets a signing secret at creation, with or without notify_url.
   */
  sends?: Record<string, string>;
  /** A kind's own timer, run by the resource's alarm: when it is next due, and what to do then. */
  timer?: {
    nextDue(store: EngineStore, config: Config): number | null;
    fire(store: EngineStore, config: Config): void;
  };
  /** Told when a request it sent is settled: delivered, aborted by the receiver, or dead after its retries. */
  onDeliveryFinished?(store: EngineStore, config: Config, deliveryId: string, outcome: "delivered" | "aborted" | "dead"): void;
}

/** A kind with its Config type erased, so kinds of different configs sit in one registry. */
export type AnyKind = KindDefinition<unknown>;

/** Helps a kind module keep its types while declaring ops. */
export function defineOp<Config, In, Out extends Json>(op: OpDefinition<Config, In, Out>): OpDefinition<Config, In, Out> {
  return op;
}

export function defineKind<Config>(kind: KindDefinition<Config>): AnyKind {
  return kind as AnyKind;
}
