/**
 * The one error type of the service and its mapping to RFC 9457 problem+json.
 * Routes throw AppError; onError and the validation hook turn it into a response,
 * so no handler builds error JSON by hand.
 */
import type { Context } from "hono";
import type { ZodError } from "zod";
import type { AppEnv } from "../env";
import { serviceUrls } from "./urls";

export const ERROR_CODES = {
  invalid_request: [400, "Invalid request"],
  unauthorized: [401, "Unauthorized"],
  payment_required: [402, "Payment required"],
  insufficient_balance: [402, "Insufficient balance"],
  cap_exceeded: [402, "Spend cap exceeded"],
  payment_invalid: [402, "Payment invalid"],
  forbidden: [403, "Forbidden"],
  not_found: [404, "Not found"],
  method_not_allowed: [405, "Method not allowed"],
  conflict: [409, "Conflict"],
  payment_replayed: [409, "Payment replayed"],
  idempotency_in_flight: [409, "Idempotent request in flight"],
  resource_expired: [410, "Resource expired"],
  resource_cancelled: [410, "Resource cancelled"],
  payload_too_large: [413, "Payload too large"],
  unsupported_media_type: [415, "Unsupported media type"],
  range_not_satisfiable: [416, "Range not satisfiable"],
  validation_failed: [422, "Validation failed"],
  idempotency_mismatch: [422, "Idempotency key reused with another request"],
  rate_limited: [429, "Rate limited"],
  storage_full: [507, "Insufficient storage"],
  internal_error: [500, "Internal error"],
  upstream_failed: [502, "Upstream failed"],
  settlement_failed: [502, "Settlement failed"],
  engine_unavailable: [503, "Engine unavailable"],
  service_misconfigured: [503, "Service misconfigured"],
  engine_timeout: [504, "Engine timed out"],
} as const satisfies Record<string, readonly [number, string]>;

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
export const fieldError = (path: string, why: string): AppError => new AppError("validation_failed", `${path}: ${why}`, { errors: [{ path, message: why }] });

export function validationError(error: ZodError, prefix = ""): AppError {
  const errors = error.issues.map((issue) => ({
    path: [prefix, ...issue.path.map(String)].filter(Boolean).join("."),
    message: issue.message,
  }));
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
