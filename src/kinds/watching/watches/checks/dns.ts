/**
 * dns_record: a lookup through a DNS-over-HTTPS resolver, in either of its two dialects: the JSON
 * one (`application/dns-json`, Cloudflare's and Google's) or RFC 8484's wire format
 * (`application/dns-message`, any resolver), encoded and decoded here (RFC 1035 §4, with name
 * compression). Records of the asked type are compared as a set, in one normal form: names in
 * lower case without the final dot, IPv6 compressed, TXT as its joined text, MX as `pref name`.
 */
import { toBase64Url } from "../../../../bytes";
import type { Check } from "../check-schema";
import { excerptOf, failed, failure, passed, timedFetch, type CheckContext, type Outcome } from "./outcome";

type DnsCheck = Extract<Check, { type: "dns_record" }>;

const TYPE_CODES: Record<DnsCheck["record_type"], number> = {
  A: 1,
  NS: 2,
  CNAME: 5,
  PTR: 12,
  MX: 15,
  TXT: 16,
  AAAA: 28,
};
const RCODES = ["NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED"];
const MAX_ANSWER_BYTES = 64 * 1024;

const bareName = (name: string) => name.toLowerCase().replace(/\.$/, "");

/** IPv6 in its one canonical spelling (the URL parser's), so `2001:DB8:0::1` equals `2001:db8::1`. */
function canonicalIpv6(text: string): string {
  try {
    return new URL(`http://[${text}]/`).hostname.slice(1, -1);
  } catch {
    return text.toLowerCase();
  }
}

/** A record's value in the normal form expected values are compared in. */
export function normalValue(type: DnsCheck["record_type"], value: string): string {
  const v = value.trim();
  switch (type) {
    case "AAAA":
      return canonicalIpv6(v);
    case "CNAME":
    case "NS":
    case "PTR":
      return bareName(v);
    case "MX": {
      const [pref, host] = v.split(/\s+/);
      return `${Number(pref)} ${bareName(host ?? "")}`;
    }
    // The JSON dialect quotes each character-string ("v=spf1" "-all"): joined, as the wire's are.
    case "TXT":
      return /^".*"$/s.test(v)
        ? [...v.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!.replace(/\\(.)/g, "$1")).join("")
        : v;
    default:
      return v;
  }
}

/** RFC 1035 §4.1: one question, recursion desired, id 0 (RFC 8484 §4.1: for caching). */
export function encodeQuery(name: string, type: number): Uint8Array {
  const labels = bareName(name)
    .split(".")
    .filter(Boolean)
    .map((l) => new TextEncoder().encode(l));
  const out = new Uint8Array(12 + labels.reduce((n, l) => n + l.length + 1, 0) + 1 + 4);
  const view = new DataView(out.buffer);
  view.setUint16(2, 0x0100);
  view.setUint16(4, 1);
  let at = 12;
  for (const label of labels) {
    out[at++] = label.length;
    out.set(label, at);
    at += label.length;
  }
  out[at++] = 0;
  view.setUint16(at, type);
  view.setUint16(at + 2, 1);
  return out;
}

class Reader {
  at = 0;
  private readonly view: DataView;
  constructor(readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  u8() {
    this.need(1);
    return this.bytes[this.at++]!;
  }
  u16() {
    this.need(2);
    const v = this.view.getUint16(this.at);
    this.at += 2;
    return v;
  }
  u32() {
    this.need(4);
    const v = this.view.getUint32(this.at);
    this.at += 4;
    return v;
  }
  need(n: number) {
    if (this.at + n > this.bytes.length) throw new Error("the DNS answer is cut short");
  }
  /** A name, following compression pointers (at most 64 of them: a loop is malformed, not endless). */
  name(): string {
    const labels: string[] = [];
    let at = this.at;
    let jumped = false;
    for (let hops = 0; ;) {
      if (at >= this.bytes.length) throw new Error("the DNS answer is cut short");
      const len = this.bytes[at]!;
      if (len === 0) {
        at++;
        break;
      }
      if ((len & 0xc0) === 0xc0) {
        if (++hops > 64) throw new Error("the DNS answer's names loop");
        const pointer = ((len & 0x3f) << 8) | this.bytes[at + 1]!;
        if (!jumped) this.at = at + 2;
        jumped = true;
        at = pointer;
        continue;
      }
      labels.push(new TextDecoder().decode(this.bytes.subarray(at + 1, at + 1 + len)));
      at += 1 + len;
    }
    if (!jumped) this.at = at;
    return labels.join(".");
  }
}

function rdata(r: Reader, type: number, length: number): string | null {
  const end = r.at + length;
  r.need(length);
  let value: string | null = null;
  if (type === 1 && length === 4) value = Array.from(r.bytes.subarray(r.at, end)).join(".");
  else if (type === 28 && length === 16) {
    const words = Array.from({ length: 8 }, (_, i) =>
      ((r.bytes[r.at + 2 * i]! << 8) | r.bytes[r.at + 2 * i + 1]!).toString(16),
    );
    value = canonicalIpv6(words.join(":"));
  } else if (type === 2 || type === 5 || type === 12) value = r.name();
  else if (type === 15) value = `${r.u16()} ${r.name()}`;
  else if (type === 16) {
    const parts: string[] = [];
    while (r.at < end) {
      const len = r.u8();
      r.need(len);
      parts.push(new TextDecoder().decode(r.bytes.subarray(r.at, r.at + len)));
      r.at += len;
    }
    value = parts.join("");
  }
  r.at = end;
  return value;
}

/** The RCODE and the values of the answer's records of `type`. */
export function decodeAnswer(bytes: Uint8Array, type: number): { rcode: number; values: string[] } {
  const r = new Reader(bytes);
  r.u16();
  const flags = r.u16();
  const questions = r.u16();
  const answers = r.u16();
  r.u16();
  r.u16();
  for (let i = 0; i < questions; i++) {
    r.name();
    r.u32();
  }
  const values: string[] = [];
  for (let i = 0; i < answers; i++) {
    r.name();
    const rtype = r.u16();
    r.u16();
    r.u32();
    const length = r.u16();
    const value = rdata(r, rtype, length);
    if (rtype === type && value !== null) values.push(value);
  }
  return { rcode: flags & 0x0f, values };
}

type Answer = { rcode: number; values: string[]; status: number; durationMs: number; excerpt: string | null };

async function lookup(c: CheckContext, check: DnsCheck): Promise<Answer> {
  const code = TYPE_CODES[check.record_type];
  const url = new URL(check.resolver_url);
  if (check.format === "wire") url.searchParams.set("dns", toBase64Url(encodeQuery(check.name, code)));
  else {
    url.searchParams.set("name", bareName(check.name));
    url.searchParams.set("type", check.record_type);
  }
  const accept = check.format === "wire" ? "application/dns-message" : "application/dns-json";
  const { answer, durationMs } = await timedFetch(c, url.href, { headers: { accept }, maxBytes: MAX_ANSWER_BYTES });
  if (answer.status !== 200)
    throw Object.assign(new Error(`The resolver answered ${answer.status}.`), {
      status: answer.status,
      excerpt: excerptOf(answer.body),
    });
  if (check.format === "wire")
    return { ...decodeAnswer(answer.body, code), status: answer.status, durationMs, excerpt: null };
  const parsed = JSON.parse(new TextDecoder().decode(answer.body)) as {
    Status?: number;
    Answer?: { type?: number; data?: string }[];
  };
  if (typeof parsed.Status !== "number") throw new Error("The resolver's answer has no Status.");
  const values = (parsed.Answer ?? []).filter((a) => a.type === code && typeof a.data === "string").map((a) => a.data!);
  return { rcode: parsed.Status, values, status: answer.status, durationMs, excerpt: excerptOf(answer.body) };
}

export async function runDnsCheck(c: CheckContext, check: DnsCheck): Promise<Outcome> {
  let found: Answer;
  try {
    found = await lookup(c, check);
  } catch (err) {
    const e = err as { status?: number; excerpt?: string | null };
    return failure(err, { status: e.status ?? null, excerpt: e.excerpt ?? null });
  }
  const values = [...new Set(found.values.map((v) => normalValue(check.record_type, v)))].sort();
  const evidence = { status: found.rcode, durationMs: found.durationMs, value: values, excerpt: found.excerpt };
  const memo = JSON.stringify(values);
  const before = c.memo === null ? null : (JSON.parse(c.memo) as string[]);
  const change =
    before !== null && c.memo !== memo
      ? { summary: `The ${check.record_type} records of ${check.name} changed.`, before, after: values }
      : null;
  if (found.rcode !== 0)
    return failed(`The resolver answered ${RCODES[found.rcode] ?? `RCODE ${found.rcode}`}.`, {
      ...evidence,
      change,
      memo,
    });
  const expected = [...new Set(check.expected.map((v) => normalValue(check.record_type, v)))].sort();
  if (expected.length === 0)
    return values.length > 0
      ? passed({ ...evidence, change, memo })
      : failed(`No ${check.record_type} record.`, { ...evidence, change, memo });
  const holds =
    check.match === "contains"
      ? expected.every((v) => values.includes(v))
      : JSON.stringify(expected) === JSON.stringify(values);
  return holds
    ? passed({ ...evidence, change, memo })
    : failed(
        `The ${check.record_type} records are [${values.join(", ")}]; expected ` +
          `${check.match === "contains" ? "to include" : "exactly"} [${expected.join(", ")}].`,
        { ...evidence, change, memo },
      );
}
