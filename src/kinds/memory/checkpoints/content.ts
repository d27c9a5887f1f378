/**
 * A checkpoint's value as bytes: how JSON and base64 become what is stored, and
 * back. Small values are kept in the Durable Object's SQLite, larger ones in R2
 * under `{resource id}/checkpoints/{checkpoint id}`; the R2 work happens in the
 * operations' asynchronous steps (values.ts), never inside a transaction.
 */
import { fromBase64, toBase64 } from "../../../bytes";
import type { Json } from "../../../json";

export type Encoding = "json" | "bytes";

export const objectKey = (resourceId: string, checkpointId: string) => `${resourceId}/checkpoints/${checkpointId}`;

export const newCheckpointId = () => `cp_${crypto.randomUUID().replace(/-/g, "")}`;

/**
 * JSON is kept as its serialization, so what comes back is the same value, not the
 * same text: whitespace and number spellings (1.0 → 1) are not preserved. Bytes are exact.
 */
export function encodeValue(input: { value?: Json; bytes_base64?: string; content_type?: string }): {
  encoding: Encoding;
  contentType: string;
  bytes: Uint8Array;
} {
  if (input.bytes_base64 !== undefined) {
    // Checked as base64 by its schema; fromBase64 throws on anything else anyway.
    return {
      encoding: "bytes",
      contentType: input.content_type ?? "application/octet-stream",
      bytes: fromBase64(input.bytes_base64),
    };
  }
  return {
    encoding: "json",
    contentType: "application/json",
    bytes: new TextEncoder().encode(JSON.stringify(input.value ?? null)),
  };
}

/** The value in the shape the API returns it: `value` for JSON, `bytes_base64` for bytes. */
export function decodeValue(encoding: Encoding, bytes: Uint8Array): { value: Json } | { bytes_base64: string } {
  if (encoding === "bytes") return { bytes_base64: toBase64(bytes) };
  return { value: JSON.parse(new TextDecoder().decode(bytes)) as Json };
}
