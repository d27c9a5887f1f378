/**
 * The one error type of the service and its mapping to RFC 9457 problem+json.
 * Routes throw AppError; onError and the validation hook turn it into a response,
 * so no handler builds error JSON by hand.
 */
import type { Context } from "hono";
import type { ZodError } from "zod";
import type { AppEnv } from "../env";
import { serviceUrls } from "./urls";

/**
 * Every error code: [status, title, what it means, what to do]. The last two are the page its `type`
 * URI opens (site/error-pages.ts), for a person and for an agent: one line each, general to the code;
 * the `detail` of each answer says what was wrong with that request.
 */
export const ERROR_CODES = {
  invalid_request: [
    400,
    "Invalid request",
    "The request could not be read: malformed JSON, a malformed header, or a parameter of the wrong shape.",
    "Correct what `detail` names and send the request again.",
  ],
  unauthorized: [
    401,
    "Unauthorized",
    "The credential is missing, malformed, unknown, or not the kind of token this route takes.",
    "Send the token `detail` names: a credit token (`zv_…`) or an access token as `Authorization: Bearer` " +
      "to create resources and use credits; a resource's management token (`zvm_…`) in `Authorization` to " +
      "call that resource, with a credit token in `X-CREDIT-TOKEN` to pay.",
  ],
  payment_required: [
    402,
    "Payment required",
    "This call costs money and came without payment.",
    "Send a credit token (`Authorization: Bearer zv_…` to create; `X-CREDIT-TOKEN` beside a management " +
      "token), or sign the x402 terms in the answer and repeat the call with `PAYMENT-SIGNATURE` or " +
      "`X-PAYMENT`. Credit tokens are bought at `POST /v1/credits`.",
  ],
  insufficient_balance: [
    402,
    "Insufficient balance",
    "The credit token's balance does not cover this call; nothing was charged.",
    "Top the token up (`POST /v1/credits` with the token as the bearer, paid with x402), or pay this call with x402.",
  ],
  cap_exceeded: [
    402,
    "Spend cap exceeded",
    "This sub-token has spent the cap it was issued with; nothing was charged.",
    "Pay with another token, or issue a new sub-token with a higher cap from the root token (`POST " +
      "/v1/credits/subtokens`).",
  ],
  payment_invalid: [
    402,
    "Payment invalid",
    "The x402 payment does not match this call's terms (amount, payee, asset, network) or its signature or " +
      "validity window is wrong.",
    "Sign the exact terms of a fresh 402 of this call and repeat the call with the new payment.",
  ],
  forbidden: [
    403,
    "Forbidden",
    "The credential is valid but not for this: another resource's management token, or a scope it lacks.",
    "Use the management token returned when this resource was created, or a credential with the scope `detail` names.",
  ],
  token_operation_not_allowed: [
    403,
    "Operation not allowed for this token",
    "The management token is a narrowed one, and this operation is not among those it was granted (extend, " +
      "export and cancel must be granted by name).",
    "Call one of the operations in the answer's `operations`, or ask the holder of a wider token for one " +
      "that grants this (`POST /v1/resources/{id}/tokens`).",
  ],
  token_key_not_allowed: [
    403,
    "Key outside this token's prefixes",
    "The management token is narrowed to key prefixes, and this call reaches a key (or lists keys) outside " +
      "them, or reaches keys it cannot name.",
    "Use keys under the prefixes in the answer's `key_prefixes`, or a token narrowed to the prefix you need.",
  ],
  token_calls_spent: [
    403,
    "Token's paid calls spent",
    "The management token (or one it was derived from) has made as many paid calls as it was granted; " +
      "nothing was charged.",
    "Ask the holder of a wider token for a new one (`POST /v1/resources/{id}/tokens`).",
  ],
  token_expired: [
    403,
    "Token expired",
    "The management token is a narrowed one whose own expiry has passed (the resource itself may live on).",
    "Ask the holder of a wider token for a new one (`POST /v1/resources/{id}/tokens`).",
  ],
  token_revoked: [
    403,
    "Token revoked",
    "The management token was revoked, itself or a token it was derived from.",
    "Ask the holder of a wider token for a new one (`POST /v1/resources/{id}/tokens`).",
  ],
  token_widening: [
    403,
    "Token would be wider than its parent",
    "A token made from a narrowed token asked for more than that token has: an operation, a later expiry, " +
      "more paid calls, or a key prefix outside its own.",
    "Ask only for what `errors[]` shows is within the parent token, or make the token from a wider one.",
  ],
  not_found: [
    404,
    "Not found",
    "No route has this path, or no resource with this id is visible to this token.",
    "Check the path against `/openapi.json` (a 404 names the known paths near a mistyped one) and the id " +
      "against the create answer.",
  ],
  method_not_allowed: [
    405,
    "Method not allowed",
    "The path exists, but not with this method.",
    "Use one of the methods in the `Allow` header of the answer.",
  ],
  conflict: [
    409,
    "Conflict",
    "The request conflicts with the resource's current state (a version, a lock, or a state that does not allow it).",
    "Read the resource's current state, then send a request that fits it, as `detail` says.",
  ],
  payment_replayed: [
    409,
    "Payment replayed",
    "This x402 payment was already used: each signed authorization pays for one call.",
    "Sign a new authorization (a new nonce) for this call.",
  ],
  idempotency_in_flight: [
    409,
    "Idempotent request in flight",
    "A request with this `Idempotency-Key` is still running.",
    "Wait a moment and retry with the same key: the retry gets the first request's answer.",
  ],
  resource_expired: [
    410,
    "Resource expired",
    "The resource's TTL ran out and its data is gone.",
    "Create a new resource; extend one before it expires with `POST /v1/resources/{id}/extend`.",
  ],
  resource_cancelled: [
    410,
    "Resource cancelled",
    "The resource was cancelled and its data is gone.",
    "Create a new resource if one is still needed.",
  ],
  payload_too_large: [
    413,
    "Payload too large",
    "The body is larger than this route takes.",
    "Send a smaller body: JSON up to 1 MiB unless the kind's limits (in `/v1/prices`) say more; large data " +
      "belongs in a blobs or objects resource.",
  ],
  unsupported_media_type: [
    415,
    "Unsupported media type",
    "The body's `Content-Type` is not one this route reads.",
    "Send JSON with `Content-Type: application/json`, or the type the operation documents for bytes.",
  ],
  range_not_satisfiable: [
    416,
    "Range not satisfiable",
    "The `Range` asked for lies outside the stored bytes.",
    "Ask for a range within the size (the answer's `Content-Range: bytes */size`), or drop the `Range` header.",
  ],
  validation_failed: [
    422,
    "Validation failed",
    "The input was read, but a field in it is not valid.",
    "Correct each field listed in `errors[]` (its `path` and `message`) and send the request again.",
  ],
  idempotency_mismatch: [
    422,
    "Idempotency key reused with another request",
    "This `Idempotency-Key` was first used with a different request.",
    "Use a new key for a new request; reuse a key only to retry the identical request.",
  ],
  rate_limited: [
    429,
    "Rate limited",
    "Too many requests from this credential or address in the current minute.",
    "Wait the seconds in `Retry-After`, then retry.",
  ],
  storage_full: [
    507,
    "Insufficient storage",
    "The resource has no room for what arrived: it reached its size or item limit.",
    "Delete or consume what it holds, as `detail` says, or use a new resource.",
  ],
  internal_error: [
    500,
    "Internal error",
    "Something failed on the service's side; it was logged under the answer's `request_id`. The call was not charged.",
    "Retry after a moment; if it keeps failing, report it with the `request_id`.",
  ],
  upstream_failed: [
    502,
    "Upstream failed",
    "A service this call reaches (a target URL, a provider) failed or answered badly.",
    "Check the target `detail` names, then retry.",
  ],
  settlement_failed: [
    502,
    "Settlement failed",
    "The x402 payment could not be settled on chain in time.",
    "If the answer carries a `transaction`, it may still confirm: check it before paying again; otherwise " +
      "retry the call.",
  ],
  engine_unavailable: [
    503,
    "Engine unavailable",
    "The engine behind this call (PDF rendering, OCR, office conversion, the egress proxy) is not " +
      "configured or not answering; nothing was charged.",
    "Retry later; if it persists, the service's operator must configure the engine `detail` names.",
  ],
  service_misconfigured: [
    503,
    "Service misconfigured",
    "This deployment lacks a setting the route needs, so it takes no money and signs nothing.",
    "Nothing in the request can fix it: retry later, or tell the service's operator which setting `detail` names.",
  ],
  engine_timeout: [
    504,
    "Engine timed out",
    "The engine behind this call did not finish in time; nothing was charged.",
    "Retry with a smaller input, or later.",
  ],
} as const satisfies Record<string, readonly [status: number, title: string, meaning: string, whatToDo: string]>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface FieldError {
  path: string;
  message: string;
}

/** Serializable form, used to carry an AppError across Durable Object RPC. */
export interface ErrorData {
  code: ErrorCode;
  detail: string;
  errors?: FieldError[];
  /** Extra top-level members of the problem body (e.g. x402 terms). */
  extra?: Record<string, unknown>;
  headers?: Record<string, string>;
  /** Not shown: the resource itself is not there (never created, or ended), so the D1 tombstone may say which. */
  resourceMissing?: boolean;
}

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly options: Omit<ErrorData, "code" | "detail"> = {},
  ) {
    super(`${code}: ${detail}`);
  }

  get status(): number {
    return ERROR_CODES[this.code][0];
  }

  toData(): ErrorData {
    return { code: this.code, detail: this.detail, ...this.options };
  }

  static from(data: ErrorData): AppError {
    const { code, detail, ...options } = data;
    return new AppError(code, detail, options);
  }
}

/** Result shape returned by Durable Object RPC methods: errors travel as data, not as thrown exceptions. */
export type Result<T> = { ok: true; value: T } | { ok: false; error: ErrorData };

export async function capture<T>(work: () => T | Promise<T>): Promise<Result<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (err) {
    if (err instanceof AppError) return { ok: false, error: err.toData() };
    throw err;
  }
}

export function unwrap<T>(result: Result<T>): T {
  if (result.ok) return result.value;
  throw AppError.from(result.error);
}

/** A 422 about one field of the input (`path`, dotted), when a schema alone cannot say it. */
export const fieldError = (path: string, why: string): AppError =>
  new AppError("validation_failed", `${path}: ${why}`, { errors: [{ path, message: why }] });

/**
 * A 422 listing every issue at its field's dotted path. An unknown field is reported at its own
 * name, one error per field (zod puts them all on the parent object), so a client can see which
 * field to rename or drop.
 */
export function validationError(error: ZodError, prefix = ""): AppError {
  const at = (path: PropertyKey[]) => [prefix, ...path.map(String)].filter(Boolean).join(".");
  const errors = error.issues.flatMap((issue) =>
    issue.code === "unrecognized_keys"
      ? issue.keys.map((key) => ({
          path: at([...issue.path, key]),
          message: "is not a field here: remove it, or correct its spelling",
        }))
      : [{ path: at(issue.path), message: issue.message }],
  );
  const first = errors[0];
  const detail = first ? `${first.path || "body"}: ${first.message}` : "The request is not valid.";
  return new AppError("validation_failed", detail, { errors });
}

function problemBody(err: AppError, c: Context<AppEnv>): Record<string, unknown> {
  const [status, title] = ERROR_CODES[err.code];
  return {
    ...err.options.extra,
    type: `${new URL(c.req.url).origin}/errors/${err.code}`,
    title,
    status,
    code: err.code,
    detail: err.detail,
    request_id: c.get("requestId"),
    ...(err.options.errors ? { errors: err.options.errors } : {}),
  };
}

export function problemResponse(err: AppError, c: Context<AppEnv>): Response {
  const headers = new Headers(err.options.headers);
  headers.set("Content-Type", "application/problem+json");
  headers.set("Cache-Control", "no-store");
  if (err.status === 401 && !headers.has("WWW-Authenticate")) {
    // RFC 9728: point the client at the protected-resource metadata.
    const { authUrl } = serviceUrls(c);
    headers.set("WWW-Authenticate", `Bearer resource_metadata="${authUrl}/.well-known/oauth-protected-resource"`);
  }
  return new Response(JSON.stringify(problemBody(err, c)), { status: err.status, headers });
}

export function onError(err: Error, c: Context<AppEnv>): Response {
  if (err instanceof AppError) return problemResponse(err, c);
  // Never leak internals: log with the request id, answer a generic 500.
  console.error(`[${c.get("requestId")}] unhandled error`, err);
  return problemResponse(new AppError("internal_error", "Something went wrong on our side; it has been logged."), c);
}
