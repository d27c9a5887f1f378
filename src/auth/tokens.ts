/**
 * Credit tokens (zv_) and management tokens (zvm_), per docs/api.md#credentials.
 *
 * A token is prefix + base62(id bytes + 32 secret bytes) + a 6-char CRC32 checksum.
 * Embedding the id lets the worker route straight to the owning Durable Object,
 * which compares SHA-256 hashes; the checksum lets clients and secret scanners
 * reject a mistyped or foreign token without a call. Only hashes are stored.
 */
import { base62Length, decodeBase62, encodeBase62 } from "./base62";
import { ID_BYTES, randomBytes } from "./ids";
import { sha256Hex, utf8 } from "../bytes";
import { memoized } from "../memo";

const SECRET_BYTES = 32;
const SUB_BYTES = 8;
const CHECKSUM_LENGTH = 6;

const CREDIT_PREFIX = "zv_";
const MANAGEMENT_PREFIX = "zvm_";

export interface CreditTokenParts {
  /** Root account: names the AccountObject. */
  accountId: string;
  /** The token's own id: equals accountId for a root token, else accountId + "." + sub id. */
  tokenId: string;
}

export interface IssuedToken<T> {
  token: string;
  hash: string;
  parts: T;
}

const CREDIT_PAYLOAD = ID_BYTES + SUB_BYTES + SECRET_BYTES;
const MANAGEMENT_PAYLOAD = ID_BYTES + SECRET_BYTES;

const CRC_TABLE = Uint32Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  return c;
});

/** CRC-32 (IEEE) of the text's UTF-8 bytes, a table lookup per byte (it runs on every token of every call). */
function crc32(text: string): number {
  let crc = ~0;
  for (const byte of utf8(text)) crc = (crc >>> 8) ^ CRC_TABLE[(crc ^ byte) & 0xff]!;
  return ~crc >>> 0;
}

/** The 6 characters a token ends with, for its body (prefix included): lets anyone check a token offline. */
export function checksum(body: string): string {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, crc32(body));
  // 4 bytes encode to 6 base62 characters.
  return encodeBase62(bytes);
}

function seal(prefix: string, payload: Uint8Array): string {
  const body = prefix + encodeBase62(payload);
  return body + checksum(body);
}

function open(prefix: string, token: string, payloadBytes: number): Uint8Array | null {
  if (!token.startsWith(prefix)) return null;
  if (token.length !== prefix.length + base62Length(payloadBytes) + CHECKSUM_LENGTH) return null;
  const body = token.slice(0, -CHECKSUM_LENGTH);
  if (checksum(body) !== token.slice(-CHECKSUM_LENGTH)) return null;
  return decodeBase62(body.slice(prefix.length), payloadBytes);
}

const idFromBytes = (prefix: string, bytes: Uint8Array) => prefix + encodeBase62(bytes);

/**
 * What a token string reads as (its parts, its hash) is a function of the string alone, and an agent
 * presents the same tokens on every call: the readings of the last 2,000 strings of a token's length (ours
 * are under 100 characters; a longer one, an access token or junk, is read each time) are kept in this
 * isolate's memory, so a paid call does not decode, checksum and hash its two tokens each time. Only these
 * pure readings are kept, never a decision about a token (whether it is known, revoked, or can pay: the
 * account and the resource decide that on every call); the strings live in memory only, as every presented
 * token already does while its request runs, and are never stored or logged.
 */
const remembered = <T>(read: (token: string) => T) => memoized(read, 2000, (token: string) => token.length <= 128);

/** The SHA-256 (hex) of a token: what the service stores and compares in place of the token. */
export const hashToken = remembered(sha256Hex);

function creditParts(account: Uint8Array, sub: Uint8Array): CreditTokenParts {
  const accountId = idFromBytes("acct_", account);
  const isRoot = sub.every((b) => b === 0);
  return { accountId, tokenId: isRoot ? accountId : `${accountId}.${encodeBase62(sub)}` };
}

/** Mints a root credit token (for a new account) or, given the root account id, a sub-token. */
export function issueCreditToken(accountId?: string): IssuedToken<CreditTokenParts> {
  const account = accountId ? decodeBase62(accountId.slice("acct_".length), ID_BYTES) : randomBytes(ID_BYTES);
  if (!account) throw new Error("malformed account id");
  const sub = accountId ? randomBytes(SUB_BYTES) : new Uint8Array(SUB_BYTES);
  const payload = new Uint8Array(CREDIT_PAYLOAD);
  payload.set(account, 0);
  payload.set(sub, ID_BYTES);
  payload.set(randomBytes(SECRET_BYTES), ID_BYTES + SUB_BYTES);
  const token = seal(CREDIT_PREFIX, payload);
  return { token, hash: sha256Hex(token), parts: creditParts(account, sub) };
}

/** A credit token's ids, or null when it is not one (the result is shared: read it, never change it). */
export const parseCreditToken = remembered((token): Readonly<CreditTokenParts> | null => {
  const payload = open(CREDIT_PREFIX, token, CREDIT_PAYLOAD);
  if (!payload) return null;
  return Object.freeze(creditParts(payload.slice(0, ID_BYTES), payload.slice(ID_BYTES, ID_BYTES + SUB_BYTES)));
});

/**
 * `seed`: the token's bytes, when they are not random (a create under an Idempotency-Key derives them: 64 bytes
 * suffice).
 */
export function issueManagementToken(seed?: Uint8Array): IssuedToken<{ resourceId: string }> {
  if (seed && seed.length < MANAGEMENT_PAYLOAD) throw new Error("management token seed too short");
  const payload = seed ? seed.slice(0, MANAGEMENT_PAYLOAD) : randomBytes(MANAGEMENT_PAYLOAD);
  const token = seal(MANAGEMENT_PREFIX, payload);
  return { token, hash: sha256Hex(token), parts: { resourceId: idFromBytes("r_", payload.slice(0, ID_BYTES)) } };
}

/**
 * Another management token for an existing resource (a narrowed one, docs/api.md#narrowed-management-tokens):
 * the same format, naming the same resource, with a fresh secret; what it may do is kept by the resource.
 */
export function issueManagementTokenFor(resourceId: string): IssuedToken<{ resourceId: string }> {
  const id = decodeBase62(resourceId.slice("r_".length), ID_BYTES);
  if (!id) throw new Error("malformed resource id");
  const payload = new Uint8Array(MANAGEMENT_PAYLOAD);
  payload.set(id, 0);
  payload.set(randomBytes(SECRET_BYTES), ID_BYTES);
  const token = seal(MANAGEMENT_PREFIX, payload);
  return { token, hash: sha256Hex(token), parts: { resourceId } };
}

/** The resource a management token names, or null when it is not one (shared, as above). */
export const parseManagementToken = remembered((token): Readonly<{ resourceId: string }> | null => {
  const payload = open(MANAGEMENT_PREFIX, token, MANAGEMENT_PAYLOAD);
  return payload ? Object.freeze({ resourceId: idFromBytes("r_", payload.slice(0, ID_BYTES)) }) : null;
});
