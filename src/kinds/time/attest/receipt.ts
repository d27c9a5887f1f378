/**
 * A fetch receipt: the payload (schema.ts documents each field) signed as a
 * compact JWS with the service's current key, so anyone can check it against
 * /.well-known/jwks.json without asking us. Only the JWS is stored; the payload
 * shown beside it is decoded from it, so the two can never disagree.
 */
import { CompactSign, base64url } from "jose";
import type { Env } from "../../../env";
import { SIGNING_ALG, signingKeys } from "../../../auth/signing-keys";
import type { FetchedBody } from "../../../delivery/fetch-guarded";
import { RECEIPT_TYP, type ReceiptPayload } from "./schema";

export interface ReceiptFacts {
  iss: string;
  receiptId: string;
  resourceId: string;
  method: "GET" | "HEAD";
  requestedUrl: string;
  /** Names of the request headers sent (values are never signed: they may be secrets). */
  sentHeaderNames: string[];
  /** Response header names to record, lowercase; "*" records all. */
  recordHeaders: string[];
  fetched: FetchedBody;
  fetchedAt: number;
}

function selectHeaders(all: Record<string, string>, names: string[]): Record<string, string | null> {
  if (names.includes("*"))
    return Object.fromEntries(
      Object.keys(all)
        .sort()
        .map((n) => [n, all[n]!]),
    );
  return Object.fromEntries([...names].sort().map((n) => [n, all[n] ?? null]));
}

export function receiptPayloadOf(f: ReceiptFacts): ReceiptPayload {
  return {
    iss: f.iss,
    receipt_id: f.receiptId,
    resource_id: f.resourceId,
    method: f.method,
    url: f.requestedUrl,
    final_url: f.fetched.url,
    request_headers: [...new Set(f.sentHeaderNames.map((n) => n.toLowerCase()))].sort(),
    status: f.fetched.status,
    headers: selectHeaders(f.fetched.headers, f.recordHeaders),
    body_sha256: f.fetched.sha256,
    body_size: f.fetched.body.length,
    fetched_at: new Date(f.fetchedAt).toISOString(),
  };
}

export async function signReceipt(env: Env, payload: ReceiptPayload): Promise<string> {
  const { current } = await signingKeys(env);
  return new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader({ alg: SIGNING_ALG, kid: current.kid, typ: RECEIPT_TYP })
    .sign(current.privateKey);
}

/** The payload of a JWS we signed and stored ourselves (no verification needed: it never left our storage). */
export function payloadOf(jws: string): ReceiptPayload {
  return JSON.parse(new TextDecoder().decode(base64url.decode(jws.split(".")[1]!))) as ReceiptPayload;
}
