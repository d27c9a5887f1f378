/**
 * Masks secrets in what goes back to a caller: a proxy injects credentials into requests to its
 * upstream, and an upstream that echoes its request (or names the key in an error) must not hand
 * them to the caller. Each secret is masked as given, percent-encoded and JSON-escaped, with as
 * many `*` as it has bytes, so lengths (and Content-Length) stay as the upstream sent them.
 */
import { utf8 } from "../bytes";

/** Shorter values would mask ordinary text; secrets this short are refused where they are configured. */
export const MIN_MASKED_LENGTH = 8;

const STAR = 0x2a;

function formsOf(secrets: string[]): Uint8Array[] {
  const forms = new Set<string>();
  for (const s of secrets) {
    if (s.length < MIN_MASKED_LENGTH) continue;
    forms.add(s);
    forms.add(encodeURIComponent(s));
    forms.add(JSON.stringify(s).slice(1, -1));
  }
  return [...forms].map(utf8);
}

/** Overwrites every occurrence of each needle in `buf` with `*`. */
function maskIn(buf: Uint8Array, needles: Uint8Array[]): void {
  for (const needle of needles) {
    const first = needle[0]!;
    for (let at = buf.indexOf(first); at !== -1 && at + needle.length <= buf.length; at = buf.indexOf(first, at + 1)) {
      let i = 1;
      while (i < needle.length && buf[at + i] === needle[i]) i++;
      if (i === needle.length) buf.fill(STAR, at, at + needle.length);
    }
  }
}

export function masking(secrets: string[]) {
  const needles = formsOf(secrets);
  const keep = Math.max(0, ...needles.map((n) => n.length)) - 1;
  return {
    text(value: string): string {
      if (!needles.length) return value;
      const bytes = utf8(value);
      maskIn(bytes, needles);
      return new TextDecoder().decode(bytes);
    },
    /**
     * The stream with every secret masked, even one split across chunks: the last `keep` bytes wait for the next chunk.
     */
    stream(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
      if (!needles.length) return body;
      let tail = new Uint8Array(0);
      return body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            const buf = new Uint8Array(tail.length + chunk.length);
            buf.set(tail);
            buf.set(chunk, tail.length);
            maskIn(buf, needles);
            const cut = Math.max(0, buf.length - keep);
            if (cut > 0) controller.enqueue(buf.slice(0, cut));
            tail = buf.slice(cut);
          },
          flush(controller) {
            if (tail.length) controller.enqueue(tail);
          },
        }),
      );
    },
  };
}
