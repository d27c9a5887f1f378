import { channel, form } from "../channel";
import { titled } from "../message";

/** notica.us, or a self-hosted Notica (notica[s]://host/token). */
export default channel({
  schemes: ["notica", "noticas"],
  service: "Notica",
  category: "push",
  grammar: "notica://token · notica[s]://host[:port][/path]/token",
  docs: "https://github.com/tannercollin/Notica",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) =>
    u.segments.length
      ? {
          url:
            `${u.origin()}/${u.segments.slice(0, -1).map(encodeURIComponent).join("/")}` +
            `${u.segments.length > 1 ? "/" : ""}`,
          token: u.secret(u.segments[u.segments.length - 1], "the token"),
        }
      : { url: "https://notica.us/", token: u.secret(u.host, "the token") },
  request: (t, m) => form(`${t.url}?${t.token}`, { d: titled(m) }),
});
