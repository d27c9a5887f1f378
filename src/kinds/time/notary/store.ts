/**
 * A notary's log: one row per stamp, in order, each chained to the one before.
 * Signing is asynchronous (WebCrypto), so it happens in the operation's prepare step;
 * the synchronous run then numbers the stamp and links it into the chain inside the
 * transaction, so concurrent stamps still get gapless seqs and one unbroken chain.
 */
import { keysetPage } from "../../../kind/pages";
import { AppError } from "../../../http/errors";
import type { EngineStore, PrepareContext } from "../../../kind/kind";
import { iso } from "../../../time";
import { fromBase64, fromHex, toBase64, toHex, sha256 } from "../../../bytes";
import { arrayBuffer, unsignedInteger } from "./bytes";
import { chainHash, CHAIN_RULE, GENESIS } from "./chain";
import { timeStampResponse } from "./rfc3161";
import { MAX_DATA_BYTES, MAX_STAMPS, type Stamp, type StampInput } from "./schema";
import { randomSerial } from "./tsa-certificate";
import { tsaPolicy, tsaSigner } from "./tsa-signer";

type Row = {
  seq: number;
  serial: string;
  sha256: string;
  gen_time: number;
  nonce: string | null;
  policy: string;
  tsr: ArrayBuffer;
  prev_chain: string;
  chain: string;
};

/** What prepare hands to run: a signed response, not yet in the log. */
export interface Signed {
  serial: string;
  sha256: string;
  genTime: number;
  nonce: string | null;
  policy: string;
  tsr: Uint8Array;
}

/** The module's tables as the kind's first migration creates them (see the kind's `migrations`). */
export const TABLES = [
  "CREATE TABLE notary_stamps (seq INTEGER PRIMARY KEY, serial TEXT NOT NULL UNIQUE, sha256 TEXT NOT NULL, " +
    "gen_time INTEGER NOT NULL, nonce TEXT, policy TEXT NOT NULL, tsr BLOB NOT NULL, prev_chain TEXT NOT " +
    "NULL, chain TEXT NOT NULL)",
  "CREATE INDEX notary_by_digest ON notary_stamps (sha256, seq)",
];

const view = (r: Row): Stamp => ({
  seq: r.seq,
  serial: r.serial,
  sha256: r.sha256,
  gen_time: iso(r.gen_time),
  nonce: r.nonce,
  policy: r.policy,
  tsr: toBase64(new Uint8Array(r.tsr)),
  prev_chain: r.prev_chain,
  chain: r.chain,
});

/** Stamps are never deleted and seqs have no gaps, so the last seq is the count: one row read, not all of them. */
export function count(sql: SqlStorage): number {
  return sql.exec<{ seq: number }>("SELECT seq FROM notary_stamps ORDER BY seq DESC LIMIT 1").toArray()[0]?.seq ?? 0;
}

function head(sql: SqlStorage): Row | undefined {
  return sql.exec<Row>("SELECT * FROM notary_stamps ORDER BY seq DESC LIMIT 1").toArray()[0];
}

function checkRoom(sql: SqlStorage): void {
  if (count(sql) >= MAX_STAMPS) {
    throw new AppError(
      "validation_failed",
      `A notary keeps at most ${MAX_STAMPS} stamps: export this one and create another.`,
      {
        errors: [{ path: "stamps", message: `the log is full (${MAX_STAMPS})` }],
      },
    );
  }
}

/** The digest to stamp: given, or computed here from the caller's bytes. */
function subjectDigest(input: StampInput): string {
  if (input.sha256 !== undefined) return input.sha256.toLowerCase();
  const bytes = input.data !== undefined ? new TextEncoder().encode(input.data) : fromBase64(input.data_base64!);
  if (bytes.length > MAX_DATA_BYTES) {
    throw new AppError(
      "payload_too_large",
      `data is limited to ${MAX_DATA_BYTES} bytes: hash larger files yourself and send sha256.`,
    );
  }
  return toHex(sha256(bytes));
}

/** Lowercase, without leading zeros: the number the token holds, written one way. */
const normalNonce = (hex: string) => hex.toLowerCase().replace(/^0+(?=.)/, "");

/** Its DER INTEGER contents; with leading zeros dropped the digits can be odd in number, and fromHex wants pairs. */
const nonceInteger = (hex: string) => unsignedInteger(fromHex(hex.length % 2 ? `0${hex}` : hex));

export async function sign(ctx: PrepareContext, input: StampInput): Promise<Signed> {
  checkRoom(ctx.sql); // before the signature: a full log costs no work
  const digest = subjectDigest(input);
  const nonce = input.nonce === undefined ? null : normalNonce(input.nonce);
  const serial = randomSerial();
  const policy = tsaPolicy(ctx.env);
  const tsr = await timeStampResponse(await tsaSigner(ctx.env), {
    policy,
    sha256: fromHex(digest),
    serial,
    genTime: ctx.now,
    nonce: nonce === null ? null : nonceInteger(nonce),
  });
  return { serial: toHex(serial), sha256: digest, genTime: ctx.now, nonce, policy, tsr };
}

/** Puts a signed stamp at the end of the log. */
export function append(store: EngineStore, s: Signed): Stamp {
  checkRoom(store.sql); // again: another stamp may have filled the log while this one was signed
  const last = head(store.sql);
  const seq = (last?.seq ?? 0) + 1;
  const prev = last?.chain ?? GENESIS;
  const chain = chainHash(prev, { seq, serial: s.serial, sha256: s.sha256, gen_time: iso(s.genTime), tsr: s.tsr });
  store.sql.exec(
    "INSERT INTO notary_stamps (seq, serial, sha256, gen_time, nonce, policy, tsr, prev_chain, chain) " +
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    seq,
    s.serial,
    s.sha256,
    s.genTime,
    s.nonce,
    s.policy,
    arrayBuffer(s.tsr),
    prev,
    chain,
  );
  return view(store.sql.exec<Row>("SELECT * FROM notary_stamps WHERE seq = ?", seq).one());
}

const page = (rows: Row[], limit: number) => keysetPage(rows, limit, (r) => r.seq, view);

export function list(store: EngineStore, limit: number, cursor: string | undefined) {
  return page(
    store.sql
      .exec<Row>("SELECT * FROM notary_stamps WHERE seq > ? ORDER BY seq LIMIT ?", Number(cursor ?? 0), limit + 1)
      .toArray(),
    limit,
  );
}

export function find(store: EngineStore, digest: string, limit: number, cursor: string | undefined) {
  const rows = store.sql
    .exec<Row>(
      "SELECT * FROM notary_stamps WHERE sha256 = ? AND seq > ? ORDER BY seq LIMIT ?",
      digest.toLowerCase(),
      Number(cursor ?? 0),
      limit + 1,
    )
    .toArray();
  return page(rows, limit);
}

export function lookup(store: EngineStore, by: { seq?: number; serial?: string }): Stamp {
  const row =
    by.seq !== undefined
      ? store.sql.exec<Row>("SELECT * FROM notary_stamps WHERE seq = ?", by.seq).toArray()[0]
      : store.sql.exec<Row>("SELECT * FROM notary_stamps WHERE serial = ?", by.serial!.toLowerCase()).toArray()[0];
  if (!row)
    throw new AppError(
      "not_found",
      by.seq !== undefined ? `No stamp ${by.seq} in this log.` : `No stamp with serial ${by.serial} in this log.`,
    );
  return view(row);
}

export function status(store: EngineStore) {
  const last = head(store.sql);
  return {
    stamps: count(store.sql),
    head: last ? { seq: last.seq, chain: last.chain, gen_time: iso(last.gen_time) } : null,
  };
}

export function exportAll(store: EngineStore) {
  const stamps = store.sql.exec<Row>("SELECT * FROM notary_stamps ORDER BY seq").toArray().map(view);
  return { chain_rule: CHAIN_RULE, head_chain: stamps.at(-1)?.chain ?? GENESIS, stamps };
}
