import { basic, bearer, channel, json } from "../channel";
import { asMarkdown, level } from "../message";
import { ChannelUrlError } from "../url";

/** ntfy.sh (ntfy://topic) or a self-hosted server (ntfy[s]://host/topic…); one publish per topic, JSON. */
export default channel({
  schemes: ["ntfy", "ntfys"],
  service: "ntfy",
  category: "push",
  grammar: "ntfy://topic · ntfy[s]://[user:password@]host[:port]/topic[/topic…][?token=tk_…]",
  docs: "https://docs.ntfy.sh/publish/#publish-as-json",
  supports: { title: true, format: "markdown", attach: true, priority: true },
  parse(u) {
    const cloud = u.segments.length === 0;
    const topics = cloud ? [u.host] : u.segments;
    if (!topics[0]) throw new ChannelUrlError("needs a topic");
    const token = u.param("token");
    const auth = token
      ? bearer(u.secret(token, "a token"))
      : u.user
        ? basic(u.secret(u.user, "a user"), u.secret(u.password, "a password"))
        : null;
    return { origin: cloud ? "https://ntfy.sh" : u.origin(), topics, auth };
  },
  request(t, m) {
    return t.topics.map((topic) =>
      json(
        `${t.origin}/`,
        {
          topic,
          message: asMarkdown(m),
          markdown: m.format !== "text",
          priority: level(m.priority, [1, 2, 3, 4, 5]),
          ...(m.title ? { title: m.title } : {}),
          ...(m.tags.length ? { tags: m.tags } : {}),
          ...(m.attach ? { attach: m.attach } : {}),
        },
        t.auth ? { authorization: t.auth } : {},
      ),
    );
  },
});
