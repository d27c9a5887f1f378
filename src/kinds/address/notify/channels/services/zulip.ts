import { basic, channel, form } from "../channel";
import { asMarkdown } from "../message";

/** A bot posts to streams (`stream` type, the title as topic) or to people by e-mail (`private`). */
export default channel({
  schemes: ["zulip"],
  service: "Zulip",
  category: "chat",
  grammar: "zulip://botname@organization[.zulipchat.com]/bot_token[/stream…|/user@example.com…]",
  docs: "https://zulip.com/api/send-message",
  supports: { title: true, format: "markdown", attach: false, priority: false },
  parse(u) {
    const bot = u.need(u.user, "the bot name");
    const org = u.need(u.host, "the organization");
    const host = org.includes(".") ? org : `${org}.zulipchat.com`;
    const email = bot.includes("@") ? bot : `${bot.endsWith("-bot") ? bot : `${bot}-bot`}@${host}`;
    return {
      host,
      email,
      token: u.secret(u.segments[0], "the bot token"),
      targets: u.segments.slice(1).length ? u.segments.slice(1) : ["general"],
    };
  },
  request: (t, m) =>
    t.targets.map((to) =>
      form(
        `https://${t.host}/api/v1/messages`,
        {
          type: to.includes("@") ? "private" : "stream",
          to,
          ...(to.includes("@") ? {} : { topic: m.title ?? "Notification" }),
          content: to.includes("@") && m.title ? `**${m.title}**\n${asMarkdown(m)}` : asMarkdown(m),
        },
        { authorization: basic(t.email, t.token) },
      ),
    ),
});
