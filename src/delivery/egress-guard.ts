/**
 * Every outbound URL passes here first. Only http(s) to public addresses:
 * loopback, private, link-local (cloud metadata), CGNAT, multicast and
 * unspecified addresses are refused, as literals in any spelling the URL
 * parser accepts (it normalises 0x7f.1, 2130706433 and [::ffff:127.0.0.1]).
 * Names are not resolved here (a Worker cannot); on Cloudflare a fetch leaves
 * through the public network, which cannot reach private ranges anyway.
 * ALLOW_PRIVATE_TARGETS lifts the address check for local development and tests.
 */
import { AppError } from "../http/errors";

/** Names that only ever mean this host or a private network (RFC 6761, RFC 6762, RFC 8375), and cloud metadata. */
const BLOCKED_NAMES = [/^localhost$/, /\.localhost$/, /(^|\.)internal$/, /\.local$/, /\.home\.arpa$/, /^metadata$/];

/** IPv4 ranges as [first octets prefix, mask bits]. */
const BLOCKED_V4: [number[], number][] = [
  [[0], 8],
  [[10], 8],
  [[100, 64], 10],
  [[127], 8],
  [[169, 254], 16],
  [[172, 16], 12],
  [[192, 0, 0], 24],
  [[192, 168], 16],
  [[198, 18], 15],
  [[224], 4],
  [[240], 4],
];

function v4ToInt(octets: number[]): number {
  return octets.reduce((n, o) => (n << 8) + o, 0) >>> 0;
}

function blockedV4(address: string): boolean {
  const octets = address.split(".").map(Number);
  if (octets.length !== 4 || octets.some((o) => !Number.isInteger(o) || o < 0 || o > 255)) return false;
  const ip = v4ToInt(octets);
  return BLOCKED_V4.some(([prefix, bits]) => {
    const base = v4ToInt([...prefix, 0, 0, 0, 0].slice(0, 4));
    const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
    return (ip & mask) === (base & mask);
  });
}

function blockedV6(address: string): boolean {
  const a = address.toLowerCase();
  if (a === "::" || a === "::1") return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (mapped) return blockedV4(mapped[1]!);
  const hexMapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(a);
  if (hexMapped) {
    const n = (parseInt(hexMapped[1]!, 16) << 16) + parseInt(hexMapped[2]!, 16);
    return blockedV4([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join("."));
  }
  const first = parseInt(a.split(":")[0] || "0", 16);
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 || (first & 0xff00) === 0xff00;
}

/**
 * The host as the checks compare it. The URL parser has already lower-cased it, mapped it through
 * IDNA (so full-width letters and dots, `ｌｏｃａｌｈｏｓｔ。`, arrive as ASCII) and read IPv4 in every
 * spelling; what is left is the root label: `localhost.` is `localhost`, and so is `localhost..`.
 */
function normalHost(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, "").replace(/\.+$/, "");
}

/** Returns the parsed URL, or throws 422 naming `field`. */
export function checkEgressUrl(raw: string, allowPrivate: boolean, field = "url"): URL {
  const refuse = (why: string) =>
    new AppError("validation_failed", `${field}: ${why}`, { errors: [{ path: field, message: why }] });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse("is not a valid URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw refuse(`the ${url.protocol} scheme is not allowed; use http or https`);
  if (url.username || url.password) throw refuse("must not carry credentials; send them in headers");
  if (allowPrivate) return url;
  const host = normalHost(url.hostname);
  if (host.includes(":") ? blockedV6(host) : blockedV4(host) || BLOCKED_NAMES.some((re) => re.test(host))) {
    throw refuse(`${host} is a private, loopback, link-local or metadata address`);
  }
  return url;
}

export const allowsPrivateTargets = (flag: string | undefined) => flag === "true" || flag === "1";
