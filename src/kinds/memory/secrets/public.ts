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
 * People open these links in a browser, so a request that prefers HTML gets pages (page.ts):
 * one saying a secret is waiting (with a passphrase field when one is set) and a Reveal button
 * that POSTs the form, then the value once with a copy button; afterwards, or for an address
 * that never existed, a page saying nothing is here (404). JSON clients get JSON.
 *
 * Once read or burned the address answers 404 like one that never existed, so it tells a
 * stranger nothing; the owner sees what happened in the status.
 */
import { AppError } from "../../../http/errors";
import { parseCallerJson } from "../../../http/json-depth";
import { iso } from "../../../time";
import { definePublicFace, type PublicAnswer, type PublicRequest } from "../../../kind/public-face";
import { bodyText, headerOf, prefersHtml } from "../../../kind/public-request";
import { checkPassphrase, keyToText, openSecret } from "./crypto";
import { failAttempt, readSecret, release, verifierOf } from "./store";
import type { SecretConfig } from "./schema";
import { nothingHerePage, revealedPage, waitingPage } from "./page";

const gone = () =>
  new AppError("not_found", "Nothing is here: the secret was revealed or destroyed already, or never existed.");

/** What prepare found: the key that opens the value (null: no passphrase), or a wrong passphrase. GET: nothing. */
type Prepared = { valueKey: string | null } | { wrong: true } | undefined;

/** What handle committed, for finish to answer. */
type Handled =
  | { state: "waiting"; passphraseRequired: boolean }
  | { state: "released"; sealed: string; key: string | null; readAt: number }
  | { state: "refused"; attemptsLeft: number };

function passphraseOf(request: PublicRequest): string | null {
  const text = bodyText(request);
  if (text === null) return null;
  const type = (headerOf(request, "content-type") ?? "").toLowerCase();
  if (type.startsWith("application/x-www-form-urlencoded")) return new URLSearchParams(text).get("passphrase") || null;
  if (!/[/+]json\b/.test(type))
    throw new AppError(
      "unsupported_media_type",
      'Send the passphrase as JSON ({"passphrase": "…"}) or as a form field.',
    );
  const p = (parseCallerJson(text, "body") as { passphrase?: unknown } | null)?.passphrase;
  return typeof p === "string" && p !== "" ? p : null;
}

export const revealFace = definePublicFace<SecretConfig, Prepared, Handled>({
  routes: [
    {
      name: "peek",
      path: "",
      methods: ["GET"],
      maxBodyBytes: 0,
      answers: ["json", "html"],
      summary:
        "Whether a secret is waiting and needs a passphrase; never reveals or uses it up. A browser gets a " +
        "page with a Reveal button.",
    },
    {
      name: "reveal",
      path: "",
      methods: ["POST"],
      maxBodyBytes: 4096,
      answers: ["json", "html"],
      summary:
        'Reveal the secret, once: `{ "value", "read_at" }`. With a passphrase, send `{ "passphrase": "…" ' +
        "}` (JSON or a form); a wrong one is 403.",
    },
  ],

  /** Checks the passphrase before the transaction (PBKDF2 takes tens of milliseconds). Reads only. */
  async prepare(ctx, _config, request) {
    if (request.route !== "reveal") return undefined;
    const row = readSecret(ctx.sql);
    if (row.sealed === null) throw gone();
    const verifier = verifierOf(row);
    if (!verifier) return { valueKey: null };
    const given = passphraseOf(request);
    if (given === null)
      throw new AppError(
        "forbidden",
        'This secret needs its passphrase: POST {"passphrase": "…"}. Nothing was used up.',
        { extra: { attempts_left: row.max_attempts - row.failed_attempts } },
      );
    const valueKey = await checkPassphrase(given, verifier);
    return valueKey ? { valueKey: keyToText(valueKey) } : { wrong: true };
  },

  handle(store, _config, request, prepared) {
    const row = readSecret(store.sql);
    // Gone already, or taken by another request while this one checked its passphrase.
    if (row.sealed === null) throw gone();
    if (request.route !== "reveal") return { state: "waiting", passphraseRequired: row.has_passphrase === 1 };
    if (prepared === undefined) throw gone();
    if ("wrong" in prepared) return { state: "refused", attemptsLeft: failAttempt(store) };
    const released = release(store)!;
    return { state: "released", sealed: released.sealed, key: prepared.valueKey, readAt: released.readAt };
  },

  /** After the commit: decrypts a released value, or answers a counted wrong passphrase with 403. */
  async finish(ctx, _config, request, handled): Promise<PublicAnswer> {
    const html = prefersHtml(request);
    if (handled.state === "waiting") {
      if (html) return { type: "html", body: waitingPage(handled.passphraseRequired, null) };
      return {
        type: "json",
        body: {
          state: "unread",
          passphrase_required: handled.passphraseRequired,
          reveal: "POST to this address to reveal the secret; it is then destroyed.",
        },
      };
    }
    if (handled.state === "refused") {
      const left = handled.attemptsLeft;
      const detail =
        left > 0
          ? `Wrong passphrase; ${left} attempt(s) left.`
          : "Wrong passphrase; that was the last attempt and the secret is destroyed.";
      if (html)
        return left > 0
          ? { type: "html", status: 403, body: waitingPage(true, detail) }
          : { type: "html", status: 404, body: nothingHerePage(detail) };
      throw new AppError("forbidden", detail, { extra: { attempts_left: left } });
    }
    const value = await openSecret(ctx.env, handled.sealed, handled.key);
    if (html) return { type: "html", body: revealedPage(value) };
    return { type: "json", body: { value, read_at: iso(handled.readAt) } };
  },

  /** A browser asking for a secret that is not there (any more) gets a page, not problem+json. */
  errorAnswer(request, error) {
    if (!prefersHtml(request)) return null;
    if (error.status === 404 || error.status === 410) return { type: "html", status: 404, body: nothingHerePage(null) };
    if (error.status === 403) return { type: "html", status: 403, body: waitingPage(true, error.detail) };
    return null;
  },
});
