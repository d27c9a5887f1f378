/**
 * IP addresses and CIDR ranges (RFC 4632, RFC 4291), for allow-lists: a proxy lets callers from
 * its ranges through. Both families; an IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) is its IPv4
 * address. IPv6 text is read by the URL parser, which accepts every standard spelling.
 */

const V4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

function v4(text: string): Uint8Array | null {
  return V4.test(text) ? new Uint8Array(text.split(".").map(Number)) : null;
}

function v6(text: string): Uint8Array | null {
  if (!text.includes(":") || /[^0-9a-fA-F:.]/.test(text)) return null;
  let host: string;
  try {
    host = new URL(`http://[${text}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  // The parser writes it compressed and in hex only: expand `::` into zero groups.
  const [head, tail] = host.includes("::") ? host.split("::") : [host, null];
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = tail === null ? left : [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right];
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    const n = parseInt(g, 16);
    bytes[i * 2] = n >> 8;
    bytes[i * 2 + 1] = n & 255;
  });
  return bytes;
}

/** An address as bytes (4 or 16), or null; IPv4-mapped IPv6 as IPv4. */
export function parseIp(text: string): Uint8Array | null {
  const bytes = v4(text) ?? v6(text);
  if (bytes?.length === 16 && bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 255 && bytes[11] === 255)
    return bytes.slice(12);
  return bytes;
}

export interface Cidr {
  bytes: Uint8Array;
  prefix: number;
}

/** `192.0.2.0/24`, `2001:db8::/32`, or a single address (the whole prefix). */
export function parseCidr(text: string): Cidr | null {
  const [address, bits, extra] = text.split("/");
  if (extra !== undefined || !address) return null;
  const bytes = parseIp(address);
  if (!bytes) return null;
  const max = bytes.length * 8;
  if (bits !== undefined && !/^\d{1,3}$/.test(bits)) return null;
  const prefix = bits === undefined ? max : Number(bits);
  return prefix <= max ? { bytes, prefix } : null;
}

export function inRange(range: Cidr, ip: Uint8Array): boolean {
  if (ip.length !== range.bytes.length) return false;
  const whole = range.prefix >> 3;
  for (let i = 0; i < whole; i++) if (ip[i] !== range.bytes[i]) return false;
  const rest = range.prefix & 7;
  if (!rest) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (ip[whole]! & mask) === (range.bytes[whole]! & mask);
}
