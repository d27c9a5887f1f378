/**
 * A checkpoint's value as bytes: how JSON and base64 become what is stored, and
 * back. Small values are kept in the Durable Object's SQLite, larger ones in R2
 * under `{resource id}/checkpoints/{checkpoint id}`; the R2 work happens in the
 * operations' asynchronous steps (values.ts), never inside a transaction.
 */
import type { Json } from "../../../json";

export type Encoding = "json" | "bytes";

export const objectKey = (resourceId: string, checkpointId: string) => `${resourceId}/checkpoints/${checkpointId}`;

export const newCheckpointId = () => `cp_${crypto.randomUUID().replace(/-/g, "")}`;

export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  // In chunks: spreading a large array into fromCharCode overflows the stack.
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** The input was checked as base64 by its schema; atob throws on anything else anyway. */
export function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  let hex = "";
  for (const b of digest) hex += b.toString(16).padStart(2, "0");
  return hex;
}

/**
 * JSON is kept as its serialization, so what comes back is the same value, not the
 * same text: whitespace and number spellings (1.0 → 1) are not preserved. Bytes are exact.
 */
export function encodeValue(input: { value?: Json; bytes_base64?: string; content_type?: string }): { encoding: Encoding; contentType: string; bytes: Uint8Array } {
  if (input.bytes_base64 !== undefined) {
    return { encoding: "bytes", contentType: input.content_type ?? "application/octet-stream", bytes: fromBase64(input.bytes_base64) };
  }
  return { encoding: "json", contentType: "application/json", bytes: new TextEncoder().encode(JSON.stringify(input.value ?? null)) };
}

/** The value in the shape the API returns it: `value` for JSON, `bytes_base64` for bytes. */
export function decodeValue(encoding: Encoding, bytes: Uint8Array): { value: Json } | { bytes_base64: string } {
  if (encoding === "bytes") return { bytes_base64: toBase64(bytes) };
  return { value: JSON.parse(new TextDecoder().decode(bytes)) as Json };
}
