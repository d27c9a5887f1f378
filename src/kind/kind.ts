/**
 * What a kind is: the contract every kind module fills in and the registry
 * drives. Routing, the OpenAPI document, the price list, the MCP tool list and
 * the generic lifecycle tests are all generated from these definitions.
 */
import type { z } from "@hono/zod-openapi";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv, Env } from "../env";
import type { Json, JsonObject } from "../json";
import type { AnyPublicFace } from "./public-face";
import type { EngineStore, PrepareContext } from "./engine";
import type { AdoptedObject } from "../rpc/resource";
import type { AnyOp, OpDefinition } from "./op";

export type Family = "time" | "address" | "memory" | "place" | "watching" | "utilities";

export type { EngineStore, OutgoingRequest, PrepareContext, StoredBody } from "./engine";

/** One step of a table layout's history (see `migrations`). */
export interface Migration {
  /** DDL and data moves, run in order in one transaction. */
  sql?: string[];
  /** What statements cannot say (a backfill computed in code). */
  run?(sql: SqlStorage): void;
  /** The stored config rewritten to the new shape (a field added with its default). */
  config?(config: JsonObject): JsonObject;
}

export interface KindDefinition<Config = unknown> {
  kind: string;
  family: Family;
  title: string;
  summary: string;
  /** Kind-specific create fields; the common ones (ttl_seconds, label, notify_url) are added by the registry. */
  createSchema: z.ZodType<Config>;
  /** A create body that succeeds as it stands (URLs at example.com), published and run by the examples test. */
  example: JsonObject;
  /**
   * Other resources the example names by management token, as placeholder token → kind (a group's
   * children): the examples test makes each from its own kind's example and puts its token in.
   */
  exampleNeeds?: Record<string, string>;
  /** Price of one day of life; create and extend charge it per started day. */
  dayPriceMicro: number;
  defaultTtlSeconds: number;
  maxTtlSeconds: number;
  /** The kind's limits (bytes, counts, seconds), published in the price list beside its create line. */
  limits?: Record<string, number>;
  /** Erased to unknown here (each op keeps its own types where it is declared; its methods take them bivariantly). */
  ops: AnyOp<Config>[];
  /**
   * Config fields holding URLs the service will call: the egress guard checks them at create (422 naming
   * the field). A dotted path reaches into objects (`check.url`), `*` into every item of an array
   * (`steps.*.targets.*.url`); a path the config does not have is skipped.
   */
  targetFields?: string[];
  /** Refuses a create whose config does not fit its lifetime (e.g. a wakeup after expiry), before payment. */
  checkCreate?(config: Config, expiresAt: number, now: number): void;
  /**
   * Takes what must not be stored or echoed as given (a secret's value, a passphrase) out of the
   * create body, before payment: `config` is what the record shows, `sealed` reaches `init` only.
   * `credential`: one the service made for the resource's public address (a proxy's), shown in the
   * create's answer this once and kept only as `sealed` has it (a hash). It is made from `seed` when one is given:
   * bytes derived from the create's Idempotency-Key and request, so the retry of a create whose answer was lost shows
   * the credential the resource holds (src/resources/create-identity.ts).
   */
  sealCreate?(
    env: Env,
    config: Config,
    seed?: Uint8Array,
  ): Promise<{ config: Config; sealed: Json; credential?: Record<string, string> }>;
  /**
   * The kind's tables, as an ordered list of migrations: a new resource runs them all; one made
   * earlier (resources live up to a year) runs, once, those it has not, before it serves anything.
   * The first creates the tables; append a step to change them; never edit or remove one.
   */
  migrations: Migration[];
  /**
   * Writes the first rows into the new tables (`sealed`: what sealCreate set aside, else null); may send (sent once the
   * resource exists).
   */
  init?(store: EngineStore, config: Config, sealed: Json): void;
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
  timer?: KindTimer<Config, unknown>;
  /**
   * A public address `/p/{public_id}` (docs/api.md#public-addresses): its routes and the steps answering them
   * (kind/public-face.ts).
   */
  public?: AnyPublicFace<Config>;
  /**
   * Releases what lives outside the resource's storage and R2 prefix (an unfinished multipart
   * upload) when it ends; the platform deletes the storage and the prefix itself.
   */
  end?(ctx: PrepareContext, config: Config): Promise<void>;
  /**
   * Routes of the service the kind needs beyond its resources' (the notary's TSA certificate at
   * /v1/tsa/…): registered with the kind's own, documented by the schemas they are declared with.
   */
  routes?(app: OpenAPIHono<AppEnv>): void;
  /**
   * Takes a message another resource relayed to it through the delivery pipeline (src/delivery/relay.ts:
   * a dead-man switch's alert to a notify resource). `relayId` is the same on every attempt: take it once.
   * Throwing makes the attempt fail (retried); the message is checked here, as any input is.
   */
  relay?(store: EngineStore, config: Config, message: Json, relayId: string, from: string): void;
  /**
   * The R2 object (below its prefix) the resource offers to another of its owner's that names it by its
   * management token (a link serving a blob's current upload), or null while it holds none. Read-only.
   */
  shared?(store: EngineStore, config: Config): { key: string } | null;
  /**
   * Takes bytes another of its owner's resources wrote below this resource's R2 prefix (a transfer
   * into an objects resource) as its content, replacing what it held. Called again with the same key
   * after a crash: taking it twice must change nothing.
   */
  adopt?(store: EngineStore, config: Config, object: AdoptedObject): void;
  /** Told when a request it sent is settled: delivered, aborted by the receiver, or dead after its retries. */
  onDeliveryFinished?(
    store: EngineStore,
    config: Config,
    deliveryId: string,
    outcome: "delivered" | "aborted" | "dead",
  ): void;
}

/** A kind with its Config type erased, so kinds of different configs sit in one registry. */
export type AnyKind = KindDefinition<unknown>;

/**
 * A kind as `define` returns it: erased for the registry, but still knowing each op by name with
 * its own output type, so callers outside the kind (the tests) read answers typed by the op that
 * gave them (`OpOutput<typeof counters, "increment">`).
 */
export type TypedKind<Ops extends readonly unknown[] = readonly unknown[]> = AnyKind & { readonly [opTypes]?: Ops };
/** Type-only: no value carries this key. */
declare const opTypes: unique symbol;
export type OpNames<K> = K extends TypedKind<infer Ops> ? Extract<Ops[number], { name: string }>["name"] : never;
export type OpOutput<K, Name extends string> =
  K extends TypedKind<infer Ops>
    ? Extract<Ops[number], { name: Name }> extends { output: z.ZodType<infer Out> }
      ? Out
      : never
    : never;

/** A kind's own timer (a wakeup's moment, a schedule's tick), run by the resource's alarm. */
export interface KindTimer<Config = unknown, Prepared = undefined> {
  nextDue(store: EngineStore, config: Config): number | null;
  /** Optional asynchronous step before `fire` (a snapshot's fetch); see PrepareContext. */
  prepare?(ctx: PrepareContext, config: Config): Promise<Prepared>;
  fire(store: EngineStore, config: Config, prepared: Prepared): void;
  /** Undoes what `prepare` left behind when `fire` no longer applies (the timer moved meanwhile). */
  discard?(ctx: PrepareContext, prepared: Prepared): Promise<void>;
}

/**
 * Starts a kind whose create config is `Config`. Its operations and timer are declared through
 * what this returns, so their functions see `config` typed without saying so, and each op keeps
 * its own input, output and prepared types (inferred from its schemas and steps):
 *
 *   const kind = kindOf<VaultConfig>();
 *   export const vaults = kind.define({ …, ops: [kind.op({ …, run: (store, config, input) => … })] });
 */
export function kindOf<Config>() {
  return {
    /** Without params or headers (`{}`), nothing joins the input. The name stays literal (see TypedKind). */
    op<const Name extends string, In, Out extends Json, Prepared = undefined, Params = {}, Headers = {}>(
      op: OpDefinition<Config, In, Out, Prepared, Params, Headers> & { name: Name },
    ): OpDefinition<Config, In, Out, Prepared, Params, Headers> & { name: Name } {
      return op;
    },
    timer<Prepared = undefined>(timer: KindTimer<Config, Prepared>): KindTimer<Config, unknown> {
      return timer as KindTimer<Config, unknown>;
    },
    define<const Ops extends readonly AnyOp<Config>[]>(kind: KindDefinition<Config> & { ops: Ops }): TypedKind<Ops> {
      return kind as unknown as TypedKind<Ops>;
    },
  };
}

/**
 * What the worker knows of a kind before loading its module (src/resources/kind-manifest.ts, generated from
 * the registry): enough to register its routes, size their bodies and name it, and how to load the rest.
 */
export interface KindCard {
  kind: string;
  family: Family;
  summary: string;
  /** The routes its `routes` adds, as registered (`get`, `/v1/tsa/certificate.pem`). */
  ownRoutes: { method: OpDefinition["method"]; path: string }[];
  ops: Pick<OpDefinition, "name" | "method" | "path" | "maxBodyBytes" | "rawBody">[];
  /** Imports the kind's module: its schemas, routes and engine are built then, not at start-up. */
  load(): Promise<AnyKind>;
}
