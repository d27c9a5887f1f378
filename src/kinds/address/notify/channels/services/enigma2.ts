import { authHeader, basic, channel, withQuery } from "../channel";
import { level, titled } from "../message";

/** OpenWebif on an Enigma2 receiver (reachable over the internet, as a Worker needs). */
export default channel({
  schemes: ["enigma2", "enigma2s"],
  service: "Enigma2 (OpenWebif)",
  category: "home",
  grammar: "enigma2[s]://[user:password@]host[:port][/path][?timeout=13]",
  docs: "https://github.com/E2OpenPlugins/e2openplugin-OpenWebif/wiki/OpenWebif-API-documentation#message",
  supports: { title: false, format: "text", attach: false, priority: true },
  parse: (u) => ({
    url: `${u.origin()}/${[...u.segments.map(encodeURIComponent), "api", "message"].join("/")}`,
    auth: u.user ? basic(u.secret(u.user, "a user"), u.password ? u.secret(u.password, "a password") : "") : null,
    timeout: Number(u.param("timeout") ?? 13),
  }),
  request: (t, m) => ({
    method: "GET" as const,
    body: null,
    headers: authHeader(t.auth),
    url: withQuery(t.url, { text: titled(m), type: level(m.priority, [1, 1, 1, 2, 3]), timeout: t.timeout }),
    okWhen: { field: "result", equals: true },
  }),
});
