/**
 * A channel URL read the way Apprise reads them: `scheme://[user[:password]@]host[:port][/path…][?query]`,
 * where a `#` is part of the path (`slack://A/B/C/#general` names a channel), parts are
 * percent-decoded, and the scheme's trailing `s` (ntfys, gotifys) means HTTPS. Channels read the
 * parts they need through `secret()` for the ones that carry credentials, so the URL shown back
 * (in the record, the send results, the attempt log) has exactly those masked.
 */
export class ChannelUrlError extends Error {}

export class ChannelUrl {
  readonly scheme: string;
  readonly user: string | null;
  readonly password: string | null;
  /** As written (case kept: Apprise hosts are often tokens), "" when absent. */
  readonly host: string;
  readonly port: number | null;
  /** The path's non-empty segments, decoded. */
  readonly segments: string[];
  readonly query: URLSearchParams;
  private readonly secrets = new Set<string>();

  constructor(readonly raw: string) {
    const m = /^([a-z][a-z0-9+.-]*):\/\/([^/?]*)([^?]*)(?:\?(.*))?$/i.exec(raw);
    if (!m) throw new ChannelUrlError("is not a channel URL (scheme://…)");
    this.scheme = m[1]!.toLowerCase();
    const authority = m[2]!;
    const at = authority.lastIndexOf("@");
    const userinfo = at >= 0 ? authority.slice(0, at) : null;
    const hostport = at >= 0 ? authority.slice(at + 1) : authority;
    const colon = userinfo?.indexOf(":") ?? -1;
    this.user = userinfo === null ? null : decode(colon >= 0 ? userinfo.slice(0, colon) : userinfo) || null;
    this.password = userinfo !== null && colon >= 0 ? decode(userinfo.slice(colon + 1)) || null : null;
    // A port is digits after the last colon; anything else keeps the colon in the host (Telegram's `123:abc` bot
    // token).
    const hp = /^(\[[^\]]+\]|.*?)(?::(\d{1,5}))?$/.exec(hostport);
    if (!hp) throw new ChannelUrlError("has a malformed host or port");
    this.host = decode(hp[1]!);
    this.port = hp[2] ? Number(hp[2]) : null;
    if (this.port !== null && (this.port < 1 || this.port > 65535))
      throw new ChannelUrlError("has a port outside 1–65535");
    this.segments = m[3]!.split("/").filter(Boolean).map(decode);
    // Decoded as Apprise does: a `+` stays a plus (it marks a header: `json://host?+X-Key=v`).
    this.query = new URLSearchParams();
    for (const pair of (m[4] ?? "").split("&").filter(Boolean)) {
      const eq = pair.indexOf("=");
      this.query.append(decode(eq >= 0 ? pair.slice(0, eq) : pair), eq >= 0 ? decode(pair.slice(eq + 1)) : "");
    }
  }

  /** The scheme ends in `s` (gotifys://): the service is reached over HTTPS. */
  get secure(): boolean {
    return this.scheme.endsWith("s");
  }

  /** `https://host[:port]` (or http for the plain scheme) for self-hosted services. */
  origin(secure = this.secure): string {
    if (!this.host) throw new ChannelUrlError("names no host");
    return `${secure ? "https" : "http"}://${this.host}${this.port ? `:${this.port}` : ""}`;
  }

  /** Marks a value as a credential (masked in the shown URL) and answers it; a missing one is refused with `what`. */
  secret(value: string | null | undefined, what: string): string {
    const v = this.need(value, what);
    this.secrets.add(v);
    return v;
  }

  need(value: string | null | undefined, what: string): string {
    if (value === null || value === undefined || value === "") throw new ChannelUrlError(`needs ${what}`);
    return value;
  }

  /** Query parameters whose names start with `prefix` (Apprise's `+header`, `-param`, `:field`), without it. */
  prefixed(prefix: string): Record<string, string> {
    return Object.fromEntries(
      [...this.query].filter(([k]) => k.startsWith(prefix) && k.length > 1).map(([k, v]) => [k.slice(1), v]),
    );
  }

  /** A query parameter (Apprise names several aliases for some). */
  param(...names: string[]): string | null {
    for (const n of names) {
      const v = this.query.get(n);
      if (v !== null && v !== "") return v;
    }
    return null;
  }

  /**
   * A yes/no query parameter read as Apprise reads one, by its first letters: yes, true, on, 1,
   * enable(d), always, allow are true; no, false, off, 0, disable(d), never, deny are false.
   * Null when absent, empty, or none of these (the channel's default applies).
   */
  flag(...names: string[]): boolean | null {
    const value = this.param(...names)?.toLowerCase();
    if (value === undefined) return null;
    const head = value.slice(0, 2);
    if (["ye", "y", "tr", "t", "on", "1", "en", "al"].includes(head)) return true;
    if (["no", "n", "fa", "f", "of", "0", "di", "de", "ne"].includes(head)) return false;
    return null;
  }

  /** The shown form: credentials keep their first two characters. */
  shown(): string {
    let out = this.raw;
    for (const s of [...this.secrets].sort((a, b) => b.length - a.length)) {
      const mask = `${s.slice(0, Math.min(2, Math.floor(s.length / 4)))}****`;
      out = out.split(s).join(mask).split(encodeURIComponent(s)).join(mask);
    }
    return out;
  }
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw new ChannelUrlError("has a malformed percent-encoding");
  }
}

/** Segments that are recipients: Apprise writes them as path parts, or as `?to=a,b`. */
export function targets(u: ChannelUrl, from: string[], ...params: string[]): string[] {
  const fromQuery = (u.param(...params, "to") ?? "").split(/[,\s]+/).filter(Boolean);
  return [...from, ...fromQuery];
}
