import { channel, json } from "../channel";
import { asMarkdown } from "../message";

export default channel({
  schemes: ["ryver"],
  service: "Ryver",
  category: "chat",
  grammar: "ryver://[botname@]organization/webhook_token",
  docs: "https://api.ryver.com/ryvhooks.html",
  supports: { title: true, format: "markdown", attach: false, priority: false },
  parse: (u) => ({
    org: u.need(u.host, "the organization"),
    token: u.secret(u.segments[0], "the webhook token"),
    botname: u.user,
  }),
  request: (t, m) =>
    json(`https://${t.org}.ryver.com/application/webhook/${t.token}`, {
      body: m.title ? `**${m.title}**\r\n${asMarkdown(m)}` : asMarkdown(m),
      createSource: { displayName: t.botname, avatar: null },
    }),
});
