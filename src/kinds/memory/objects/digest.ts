/**
 * The object's sha256 on its downloads: RFC 9530 `Repr-Digest` (base64, the digest of the
 * whole object even on a 206, as the RFC defines it) and the hex form agents compare with.
 */
import { fromHex, toBase64 } from "../../../bytes";

function reprDigest(hex: string): string {
  return `sha-256=:${toBase64(fromHex(hex))}:`;
}

export const digestHeaders = {
  documented: {
    "Repr-Digest": "RFC 9530: `sha-256=:<base64>:` of the whole object (also on a 206).",
    "X-Content-SHA256": "The same SHA-256, hex, as in the object's `sha256`.",
  },
  of: (out: { sha256: string }) => ({ "Repr-Digest": reprDigest(out.sha256), "X-Content-SHA256": out.sha256 }),
};
