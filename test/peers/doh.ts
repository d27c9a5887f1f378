/**
 * A DNS-over-HTTPS responder for the receiver (receiver.ts, /doh/<name>): it answers from a
 * record set the test stored (PUT /_content/<name>, JSON `{ "rcode": "NOERROR", "A": ["192.0.2.1"],
 * "MX": ["10 mail.example.com"], "TXT": ["v=spf1 -all"] }`) in both dialects a resolver speaks:
 * `application/dns-json` (GET ?name=&type=) and RFC 8484's wire format (GET ?dns=, or POST),
 * encoded by dns-packet, an implementation independent of the one under test.
 */
import * as dnsPacket from "dns-packet";

export type RecordSet = { rcode?: string } & Record<string, string[] | string | undefined>;

const TYPE_CODES: Record<string, number> = { A: 1, NS: 2, CNAME: 5, PTR: 12, MX: 15, TXT: 16, AAAA: 28 };
const RCODE_CODES: Record<string, number> = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3 };

function values(set: RecordSet, type: string): string[] {
  const v = set[type];
  return Array.isArray(v) ? v : [];
}

/** A record's data as dns-packet encodes it. */
function wireData(type: string, value: string): unknown {
  if (type === "MX") {
    const [preference, exchange] = value.split(/\s+/);
    return { preference: Number(preference), exchange };
  }
  if (type === "TXT") return [value];
  return value;
}

/** The JSON dialect's `data`: names end with a dot, TXT is quoted. */
function jsonData(type: string, value: string): string {
  if (type === "TXT") return `"${value}"`;
  if (type === "MX") return `${value}.`;
  if (type === "CNAME" || type === "NS" || type === "PTR") return `${value}.`;
  return value;
}

export function answerDoh(
  set: RecordSet,
  url: URL,
  method: string,
  body: Buffer,
): { status: number; type: string; body: Buffer | string } {
  const rcode = set.rcode ?? "NOERROR";
  const dns = url.searchParams.get("dns");
  if (method === "POST" || dns !== null) {
    const query = dnsPacket.decode(method === "POST" ? body : Buffer.from(dns!, "base64url"));
    const question = query.questions![0]!;
    const answers = values(set, question.type).map((v) => ({
      type: question.type,
      class: "IN",
      name: question.name,
      ttl: 300,
      data: wireData(question.type, v),
    }));
    const packet = dnsPacket.encode({
      type: "response",
      id: query.id,
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (RCODE_CODES[rcode] ?? 2),
      questions: query.questions,
      answers: answers as dnsPacket.Answer[],
    });
    return { status: 200, type: "application/dns-message", body: packet };
  }
  const name = url.searchParams.get("name") ?? "";
  const type = (url.searchParams.get("type") ?? "A").toUpperCase();
  const answer = values(set, type).map((v) => ({
    name: `${name}.`,
    type: TYPE_CODES[type],
    TTL: 300,
    data: jsonData(type, v),
  }));
  return {
    status: 200,
    type: "application/dns-json",
    body: JSON.stringify({
      Status: RCODE_CODES[rcode] ?? 2,
      TC: false,
      RD: true,
      RA: true,
      Question: [{ name: `${name}.`, type: TYPE_CODES[type] }],
      Answer: answer,
    }),
  };
}
