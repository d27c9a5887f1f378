/**
 * What one check finds, whatever its type: up or not, the evidence (status, timing, an excerpt of
 * the answer, the value read), and for the change types what changed since the last check. Each
 * type reads its own `memo` (what it remembered from the last check: a hash, a value, the feed's
 * item ids) and says what to remember next.
 */
import type { Json } from "../../../../json";
import type { PrepareContext } from "../../../../kind/kind";
import { AppError } from "../../../../http/errors";
import { fetchGuarded, type FetchedBody } from "../../../../delivery/fetch-guarded";
import type { HttpCheck } from "../check-schema";
import { EXCERPT_CHARS } from "../limits";
import type { WatchConfig } from "../schema";

export interface Change {
  summary: string;
  before: Json;
  after: Json;
  /** New feed items. */
  items?: Json[];
}

export interface Outcome {
  ok: boolean;
  status: number | null;
  durationMs: number | null;
  error: string | null;
  value: Json | null;
  excerpt: string | null;
  change: Change | null;
  /** What to remember for the next check; undefined keeps what was remembered. */
  memo?: string;
}

export interface CheckContext {
  ctx: PrepareContext;
  config: WatchConfig;
  /** What the last check remembered (null before the first). */
  memo: string | null;
  /** The resource's own User-Agent. */
  userAgent: string;
}

export const failed = (error: string, evidence: Partial<Outcome> = {}): Outcome => ({
  ok: false,
  status: null,
  durationMs: null,
  value: null,
  excerpt: null,
  change: null,
  ...evidence,
  error,
});

export const passed = (evidence: Partial<Outcome> = {}): Outcome => ({
  ok: true,
  status: null,
  durationMs: null,
  value: null,
  excerpt: null,
  change: null,
  error: null,
  ...evidence,
});

/** A check that could not even ask (refused URL, network error, timeout, too large): a failure that says why. */
export function failure(err: unknown, evidence: Partial<Outcome> = {}): Outcome {
  return failed(err instanceof AppError ? err.detail : err instanceof Error ? err.message : String(err), evidence);
}

export const excerptOf = (body: Uint8Array): string | null =>
  body.length === 0 ? null : new TextDecoder().decode(body.subarray(0, EXCERPT_CHARS * 4)).slice(0, EXCERPT_CHARS);

/** A guarded fetch for a check, with its timing (the whole answer, body included). */
export async function timedFetch(
  c: CheckContext,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; maxBytes: number },
): Promise<{ answer: FetchedBody; durationMs: number }> {
  const started = Date.now();
  const own = Object.keys(init.headers ?? {}).some((name) => name.toLowerCase() === "user-agent");
  const headers = own ? init.headers : { "user-agent": c.userAgent, ...init.headers };
  const answer = await fetchGuarded(c.ctx.env, url, {
    ...init,
    headers,
    timeoutMs: c.config.timeout_ms,
    field: "check.url",
  });
  return { answer, durationMs: Date.now() - started };
}

/** Whether `status` is one of the expected codes or classes. */
export function statusExpected(status: number, expected: (number | string)[]): boolean {
  return expected.some((e) => (typeof e === "number" ? e === status : Math.floor(status / 100) === Number(e[0])));
}

/**
 * An HTTP check's request as configured, and its status against expected_status: the answer with the
 * evidence every outcome carries, or the failed outcome when it could not be fetched or its status is not expected.
 */
export async function fetchExpected(
  c: CheckContext,
  check: HttpCheck,
): Promise<{ answer: FetchedBody; durationMs: number; evidence: Partial<Outcome> } | Outcome> {
  let fetched: Awaited<ReturnType<typeof timedFetch>>;
  try {
    const body = check.method === "POST" && check.body !== null ? check.body : undefined;
    fetched = await timedFetch(c, check.url, {
      method: check.method,
      headers: check.headers,
      body,
      maxBytes: check.max_bytes,
    });
  } catch (err) {
    return failure(err);
  }
  const { answer, durationMs } = fetched;
  const evidence: Partial<Outcome> = { status: answer.status, durationMs, excerpt: excerptOf(answer.body) };
  if (!statusExpected(answer.status, check.expected_status))
    return failed(`Status ${answer.status} is not one of ${check.expected_status.join(", ")}.`, evidence);
  return { ...fetched, evidence };
}

type Comparable = number | bigint | string;

/** `a op b` for numbers (or big integers); strings compare only with == and !=. */
export function compare(a: Comparable, op: string, b: Comparable): boolean {
  switch (op) {
    case "==":
      return a === b;
    case "!=":
      return a !== b;
    case "<":
      return a < b;
    case "<=":
      return a <= b;
    case ">":
      return a > b;
    case ">=":
      return a >= b;
    default:
      return false;
  }
}
