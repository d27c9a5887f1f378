import { channel, json, withQuery } from "../channel";
import { asMarkdown } from "../message";

/** A custom robot; its keyword or IP allow-list security works as is (a signing secret would expire before a retry). */
export default channel({
  schemes: ["dingtalk"],
  service: "DingTalk",
  category: "chat",
  grammar: "dingtalk://access_token[/mobile…]",
  docs: "https://open.dingtalk.com/document/orgapp/custom-robots-send-group-messages",
  supports: { title: true, format: "markdown", attach: false, priority: false },
  parse: (u) => ({ token: u.secret(u.host, "the access token"), mobiles: u.segments }),
  request: (t, m) => ({
    ...json(withQuery("https://oapi.dingtalk.com/robot/send", { access_token: t.token }), {
      msgtype: "markdown",
      markdown: { title: m.title ?? "Notification", text: m.title ? `## ${m.title}\n${asMarkdown(m)}` : asMarkdown(m) },
      at: { atMobiles: t.mobiles, isAtAll: false },
    }),
    okWhen: { field: "errcode", equals: 0 },
  }),
});
