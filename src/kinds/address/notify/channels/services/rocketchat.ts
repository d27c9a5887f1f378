import { channel, json } from "../channel";
import { asMarkdown } from "../message";

/** An incoming-webhook integration (`/hooks/{token}`); `#channel` and `@user` targets override its default. */
export default channel({
  schemes: ["rocket", "rockets"],
  service: "Rocket.Chat",
  category: "chat",
  grammar: "rocket[s]://webhook_token@host[:port][/#channel|/@user…]",
  docs: "https://docs.rocket.chat/docs/integrations",
  supports: { title: true, format: "markdown", attach: false, priority: false },
  parse: (u) => ({
    url:
      `${u.origin()}/hooks/${u.secret(u.user, "the webhook token")}` +
      `${u.password ? `/${u.secret(u.password, "the webhook token")}` : ""}`,
    targets: u.segments,
  }),
  request(t, m) {
    const text = m.title ? `*${m.title}*\n${asMarkdown(m)}` : asMarkdown(m);
    return t.targets.length ? t.targets.map((channel) => json(t.url, { text, channel })) : json(t.url, { text });
  },
});
