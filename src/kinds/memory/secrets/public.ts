/**
 * The secret's public address. GET only says whether something is there: link previews,
 * chat unfurlers and mail scanners fetch URLs with GET, and must not use up the one read
 * (the OneTimeSecret pattern). POST reveals it, once:
 *
 * - prepare (async, read-only) checks the passphrase against its PBKDF2 verifier;
 * - handle (the transaction) takes the sealed value out and records read_at, or counts a
 *   wrong passphrase and burns the secret at the limit; both commit before any answer;
 * - finish (after the commit) decrypts what handle released, or turns a refusal into a 403.
 *
 * Once read or burned the address answers 404 like one that never existed, so it tells a
 * stranger nothing; the owner sees what happened in the status.
 */
import { AppError } from "../../../http/errors";
import { parseCallerJson } from "../../../http/json-depth";
import type { Json } from "../../../json";
import type { EngineStore, PrepareContext, PublicAnswer, PublicRequest } from "../../../resources/kind";
import { iso } from "../../../time";
import { checkPassphrase, keyToText, openSecret } from "./crypto";
import { failAttempt, readSecret, release, verifierOf } from "./store";

export const publicPaths = [
  { path: "", methods: ["get", "head"] as ("get" | "head")[], summary: "Whether a secret is waiting and needs a passphrase; never reveals or uses it up." },
  {
    path: "", methods: ["post"] as "post"[],
    summary: 'Reveal the secret, once: `{ "value", "read_at" }`. With a passphrase, send `{ "passphrase": "…" }` (JSON or a form); a wrong one is 403.',
  },
];

/** What handle hands to finish inside the object; never sent as it is. */
const RELEASED = "__secret_released";
const REFUSED = "__secret_refused";

const gone = () => new AppError("not_found", "Nothing is here: the secret was revealed or destroyed already, or never existed.");

type Prepared = { valueKey: string | null } | { wrong: true } | undefined;

function passphraseOf(request: PublicRequest): string | null {
  if (request.body === null) return null;
  const type = (request.contentType ?? "").toLowerCase();
  if (type.startsWith("application/x-www-form-urlencoded")) return new URLSearchParams(request.body).get("passphrase");
  if (!/[/+]json\b/.test(type)) throw new AppError("unsupported_media_type", 'Send the passphrase as JSON ({"passphrase": "…"}) or as a form field.');
  const parsed = parseCallerJson(request.body, "body");
  const p = (parsed as { passphrase?: unknown } | null)?.passphrase;
  return typeof p === "string" && p !== "" ? p : null;
}

function checkRoute(request: PublicRequest): void {
  if (request.path !== "") throw gone();
  if (!["GET", "HEAD", "POST"].includes(request.method)) {
    throw new AppError("method_not_allowed", "GET shows whether a secret is here; POST reveals it.", { headers: { Allow: "GET, HEAD, POST" } });
  }
}

/** Checks the passphrase before the transaction (PBKDF2 takes tens of milliseconds). Reads only. */
export async function preparePublic(ctx: PrepareContext, request: PublicRequest): Promise<Prepared> {
  checkRoute(request);
  if (request.method !== "POST") return undefined;
  const row = readSecret(ctx.sql);
  if (row.sealed === null) throw gone();
  const verifier = verifierOf(row);
  if (!verifier) return { valueKey: null };
  const given = passphraseOf(request);
  if (given === null) throw new AppError("forbidden", 'This secret needs its passphrase: POST {"passphrase": "…"}. Nothing was used up.');
  const valueKey = await checkPassphrase(given, verifier);
  return valueKey ? { valueKey: keyToText(valueKey) } : { wrong: true };
}

export function handlePublic(store: EngineStore, request: PublicRequest, prepared: Prepared): PublicAnswer {
  checkRoute(request);
  const row = readSecret(store.sql);
  if (request.method !== "POST") {
    if (row.sealed === null) throw gone();
    return { status: 200, body: { state: "unread", passphrase_required: row.has_passphrase === 1, reveal: "POST to this address to reveal the secret; it is then destroyed." } };
  }
  // Another request may have taken it while this one checked its passphrase.
  if (row.sealed === null || prepared === undefined) throw gone();
  if ("wrong" in prepared) {
    const left = failAttempt(store);
    return { status: 403, body: { [REFUSED]: { attempts_left: left } } };
  }
  const released = release(store)!;
  return { status: 200, body: { [RELEASED]: { sealed: released.sealed, key: prepared.valueKey, read_at: iso(released.readAt) } } };
}

/** After the commit: decrypts a released value, or answers a counted wrong passphrase with 403. */
export async function finishPublic(ctx: PrepareContext, answer: PublicAnswer): Promise<PublicAnswer> {
  const body = answer.body as Record<string, Json> | string;
  if (typeof body !== "object" || body === null) return answer;
  const refused = body[REFUSED] as { attempts_left: number } | undefined;
  if (refused) {
    const left = refused.attempts_left;
    throw new AppError("forbidden", left > 0 ? `Wrong passphrase; ${left} attempt(s) left.` : "Wrong passphrase; that was the last attempt and the secret is destroyed.", {
      extra: { attempts_left: left },
    });
  }
  const released = body[RELEASED] as { sealed: string; key: string | null; read_at: string } | undefined;
  if (!released) return answer;
  const value = await openSecret(ctx.env, released.sealed, released.key);
  return { status: 200, body: { value, read_at: released.read_at } };
}
