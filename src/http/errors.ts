/**
 * The one error type of the service and its mapping to RFC 9457 problem+json.
 * Routes throw AppError; onError and the validation hook turn it into a response,
 * so no handler builds error JSON by hand.
 */
import type { Context } from "hono";
import type { ZodError } from "zod";
import type { AppEnv } from "../env";
import { serviceUrls } from "./urls";
import { ERROR_CODES, type ErrorCode } from "./error-codes";

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
