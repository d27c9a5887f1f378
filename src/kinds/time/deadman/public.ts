/**
 * The ping address of a dead-man switch, shaped like healthchecks.io's so existing
 * cron lines work unchanged (`curl -fsS -m 10 --retry 5 …/p/{public_id}`):
 * the address itself is success, `/start` times a run, `/fail` reports a failure,
 * `/log` only records, and `/{exit_code}` (0–255) passes a command's exit status.
 */
import { AppError } from "../../../http/errors";
import type { EngineStore, PublicAnswer, PublicRequest } from "../../../resources/kind";
import type { DeadmanConfig, Signal } from "./schema";
import { ping } from "./switch";

const METHODS = ["GET", "HEAD", "POST"];
const NAMED: Record<string, Signal> = { "": "success", "/start": "start", "/fail": "fail", "/log": "log" };

export const publicPaths = [
  { path: "", methods: ["get", "head", "post"] as ("get" | "head" | "post")[], summary: "Success ping: the switch is up until the period (plus grace) runs out. A body is kept in the ping log (first 1 KiB)." },
  { path: "/start", methods: ["get", "head", "post"] as ("get" | "head" | "post")[], summary: "The job started: the next success or failure records the run's duration." },
  { path: "/fail", methods: ["get", "head", "post"] as ("get" | "head" | "post")[], summary: "The job failed: counts as a miss (down at once with alert_after_misses 1)." },
  { path: "/log", methods: ["get", "head", "post"] as ("get" | "head" | "post")[], summary: "Recorded in the ping log only; the state does not change." },
  { path: "/{exit_code}", methods: ["get", "head", "post"] as ("get" | "head" | "post")[], summary: "A command's exit status, 0–255: 0 is a success, anything else a failure." },
];

function signalOf(path: string): { signal: Signal; exitCode: number | null } | null {
  const named = NAMED[path];
  if (named) return { signal: named, exitCode: null };
  const code = /^\/(\d{1,3})$/.exec(path);
  if (!code || Number(code[1]) > 255) return null;
  const exitCode = Number(code[1]);
  return { signal: exitCode === 0 ? "success" : "fail", exitCode };
}

export function handlePing(store: EngineStore, config: DeadmanConfig, request: PublicRequest): PublicAnswer {
  if (!METHODS.includes(request.method)) {
    throw new AppError("method_not_allowed", "Ping with GET, HEAD or POST.", { headers: { Allow: METHODS.join(", ") } });
  }
  const parsed = signalOf(request.path);
  if (!parsed) throw new AppError("not_found", "Ping the address itself, or /start, /fail, /log or /{exit code 0-255} below it.");
  ping(store, config, { ...parsed, source: "public", method: request.method, body: request.body });
  return { status: 200, body: "OK" };
}
