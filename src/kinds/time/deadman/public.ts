/**
 * The ping address of a dead-man switch, shaped like healthchecks.io's so existing
 * cron lines work unchanged (`curl -fsS -m 10 --retry 5 …/p/{public_id}`):
 * the address itself is success, `/start` times a run, `/fail` reports a failure,
 * `/log` only records, and `/{exit_code}` (0–255) passes a command's exit status.
 */
import { AppError } from "../../../http/errors";
import type { EngineStore } from "../../../kind/kind";
import { definePublicFace, type PublicAnswer, type PublicMethod, type PublicRequest } from "../../../kind/public-face";
import { bodyText } from "../../../kind/public-request";
import type { DeadmanConfig, Signal } from "./schema";
import { ping } from "./store/switch";

const METHODS: PublicMethod[] = ["GET", "HEAD", "POST"];
const NAMED: Record<string, Signal> = { success: "success", start: "start", fail: "fail", log: "log" };

/** A ping's body is kept to its first KiB; more than this is refused. */
const MAX_PING_BODY_BYTES = 100 * 1024;

const route = (name: string, path: string, summary: string) => ({
  name,
  path,
  methods: METHODS,
  summary,
  maxBodyBytes: MAX_PING_BODY_BYTES,
  answers: ["text" as const],
});

const routes = [
  route(
    "success",
    "",
    "Success ping: the switch is up until the period (plus grace) runs out. A body is kept in the ping log " +
      "(first 1 KiB).",
  ),
  route("start", "/start", "The job started: the next success or failure records the run's duration."),
  route("fail", "/fail", "The job failed: counts as a miss (down at once with alert_after_misses 1)."),
  route("log", "/log", "Recorded in the ping log only; the state does not change."),
  route("exit_code", "/{exit_code}", "A command's exit status, 0–255: 0 is a success, anything else a failure."),
];

function signalOf(request: PublicRequest): { signal: Signal; exitCode: number | null } | null {
  const named = NAMED[request.route];
  if (named) return { signal: named, exitCode: null };
  const code = /^\d{1,3}$/.exec(request.params.exit_code ?? "");
  if (!code || Number(code[0]) > 255) return null;
  const exitCode = Number(code[0]);
  return { signal: exitCode === 0 ? "success" : "fail", exitCode };
}

function handlePing(store: EngineStore, config: DeadmanConfig, request: PublicRequest): PublicAnswer {
  const parsed = signalOf(request);
  if (!parsed)
    throw new AppError("not_found", "Ping the address itself, or /start, /fail, /log or /{exit code 0-255} below it.");
  ping(store, config, { ...parsed, source: "public", method: request.method, body: bodyText(request) });
  return { type: "text", body: "OK" };
}

export const pingFace = definePublicFace<DeadmanConfig>({ routes, handle: handlePing });
