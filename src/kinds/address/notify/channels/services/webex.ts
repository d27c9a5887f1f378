import { channel, json } from "../channel";
import { asMarkdown } from "../message";

export default channel({
  schemes: ["wxteams", "webex"],
  service: "Webex",
  category: "chat",
  grammar: "wxteams://webhook_token",
  docs: "https://apphub.webex.com/applications/incoming-webhooks-cisco-systems-38054-23307",
  supports: { title: true, format: "markdown", attach: false, priority: false },
  parse: (u) => ({ token: u.secret(u.host, "the webhook token") }),
  request: (t, m) =>
    json(`https://api.ciscospark.com/v1/webhooks/incoming/${t.token}`, {
      markdown: m.title ? `**${m.title}**\n${asMarkdown(m)}` : asMarkdown(m),
    }),
});
