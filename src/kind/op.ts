/**
 * What an operation of a kind is: the data-plane call a kind declares (kind/kind.ts holds the kind
 * itself), from which its route, OpenAPI operation, price line and MCP tool are generated.
 */
import type { z } from "@hono/zod-openapi";
import type { Json, JsonObject } from "../json";
import type { EngineStore, PrepareContext } from "./engine";

/**
 * A call of an operation that succeeds on a resource made from its kind's `example`: published
 * in the OpenAPI document and by describe_kind, and run as written by the examples test.
 */
export interface OpExample {
  /** The parameters the operation's path names (e.g. `{ key: "config" }`). */
  params?: Record<string, string>;
  /** The JSON body (POST, PUT) or the query (GET, DELETE). */
  input?: JsonObject;
  /** Request headers the operation reads, by lower-case name. */
  headers?: Record<string, string>;
  /**
   * For a rawBody operation: the bytes, one character per byte (text as it is; binary as `\u0000`–`\u00ff`,
   * binaryString in bytes.ts).
   */
  bytes?: string;
  /**
   * Operations whose examples must run first, in this order, for this one to succeed (a lease to ack,
   * an upload to complete). Ids the service issued to them (fields named `*_id` or `*_token`) take the
   * place of the same-named values here.
   */
  after?: string[];
  /**
   * Requests (POSTs of a small JSON body) that reach the resource's public address first: something to read back (a
   * bin's capture).
   */
  arrivals?: number;
  /**
   * The JSON body the arrivals post, when the address takes only some (a form's fields); default `{ "example": n }`.
   */
  arrivalBody?: JsonObject;
}

/**
 * A data-plane operation at `/v1/{kind}/{id}{path}`. `run` executes synchronously
 * inside a SQLite transaction of the resource's Durable Object, so it is atomic and
 * can be dry-run before charging (a refused operation is never charged).
 */
/**
 * `In` is the body or query; `Params` and `Headers` (inferred from `params` and `headers`) join it, so
 * `run` sees one typed input.
 */
export interface OpDefinition<
  Config = unknown,
  In = unknown,
  Out extends Json = Json,
  Prepared = undefined,
  Params = {},
  Headers = {},
> {
  name: string;
  method: "get" | "post" | "put" | "delete";
  /** Suffix below `/v1/{kind}/{id}`; "" for the resource itself. May name parameters, e.g. "/keys/{key}". */
  path: string;
  summary: string;
  priceMicro: number;
  /**
   * A POST that discards what the resource held (a cancel, a purge, an acknowledged message): its
   * MCP tool says so (`destructiveHint`). PUT and DELETE are taken as such from their method.
   */
  destructive?: boolean;
  /**
   * The keys this operation touches, where its input holds them (dotted paths, `*` for every item of an
   * array): a management token narrowed to key prefixes may call it only for keys under them; `prefix`
   * is a listing's prefix field (absent: every key). An operation of a keyed kind without this is refused
   * to such a token (docs/api.md#narrowed-management-tokens).
   */
  keys?: { at?: string[]; prefix?: string };
  /** Request body (POST/PUT) or query (GET/DELETE); the parameters of `path` and `headers` are merged into it. */
  input: z.ZodType<In>;
  /** The parameters `path` names (e.g. `{ key }`), each a string schema. */
  params?: z.ZodObject & z.ZodType<Params>;
  /** Request headers the operation reads, by lower-case name (e.g. "if-match"). */
  headers?: z.ZodObject & z.ZodType<Headers>;
  /** A larger request body than the API's 1 MiB (docs/api.md#requests-and-conventions), for operations that need it. */
  maxBodyBytes?: number;
  /**
   * The body is raw bytes of any type, up to `maxBodyBytes`, not JSON: it reaches `prepare` as a
   * stream (never held whole), and the input (then from the query) gains `content_type` and
   * `content_length` from the headers; Content-Length is required.
   */
  rawBody?: boolean;
  /**
   * The output names a stored R2 object (`object_key`, below the resource's prefix) that the route
   * streams back, Range honoured, instead of answering JSON; the output's other fields are not sent.
   */
  servesObject?: boolean;
  /**
   * Response headers derived from the output (e.g. an ETag): what each means, for the OpenAPI document, and their
   * values.
   */
  responseHeaders?: { documented: Record<string, string>; of(out: Out): Record<string, string> };
  /**
   * A long-poll (docs/api.md#requests-and-conventions: `wait_seconds` ≤ 30 in the input): while `ready` is false the
   * call waits, up to that long, for other work on the resource to change it, then runs either way.
   */
  ready?(store: EngineStore, config: Config, input: In & Params & Headers): boolean;
  output: z.ZodType<Out>;
  /** A call that succeeds (required when the operation takes any input or path parameter). */
  example?: OpExample;
  /** Status codes other than 2xx this operation may answer (besides the common ones). */
  errors?: number[];
  /** Optional asynchronous step before `run` (see PrepareContext); its result reaches `run`. `body`: see rawBody. */
  prepare?(
    ctx: PrepareContext,
    config: Config,
    input: In & Params & Headers,
    body: ReadableStream<Uint8Array> | null,
  ): Promise<Prepared>;
  run(store: EngineStore, config: Config, input: In & Params & Headers, prepared: Prepared): Out;
  /** Undoes what `prepare` left behind (an R2 object) when the operation is refused after it. */
  discard?(ctx: PrepareContext, prepared: Prepared): Promise<void>;
}

/** An op with its own types erased, as a kind's list holds it. */
export type AnyOp<Config = unknown> = OpDefinition<Config, unknown, Json, unknown, unknown, unknown>;
