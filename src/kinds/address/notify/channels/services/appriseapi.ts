import { basic, channel, json } from "../channel";
import { messageType } from "../custom";

/** An Apprise API server relaying to its stored configuration (by key, optionally tags). */
export default channel({
  schemes: ["apprise", "apprises"],
  service: "Apprise API",
  category: "webhook",
  grammar: "apprise[s]://[user:password@]host[:port][/path]/config_key[?tags=…]",
  docs: "https://github.com/caronc/apprise-api#stateful-solution",
  supports: { title: true, format: "markdown", attach: false, priority: true },
  parse: (u) => {
    const key = u.secret(u.segments[u.segments.length - 1], "the configuration key");
    const path = [...u.segments.slice(0, -1).map(encodeURIComponent), "notify", encodeURIComponent(key)];
    return {
      url: `${u.origin()}/${path.join("/")}`,
      auth: u.user ? basic(u.secret(u.user, "a user"), u.password ? u.secret(u.password, "a password") : "") : null,
      tags: u.param("tags", "tag"),
    };
  },
  request: (t, m) =>
    json(
      t.url,
      {
        title: m.title ?? "",
        body: m.body,
        type: messageType(m),
        format: m.format,
        ...(t.tags ? { tag: t.tags } : m.tags.length ? { tag: m.tags.join(",") } : {}),
      },
      t.auth ? { authorization: t.auth } : {},
    ),
});
