import { channel, json, withQuery } from "../channel";
import { asMarkdown } from "../message";

export default channel({
  schemes: ["wecombot"],
  service: "WeCom bot",
  category: "chat",
  grammar: "wecombot://bot_key",
  docs: "https://developer.work.weixin.qq.com/document/path/91770",
  supports: { title: true, format: "markdown", attach: false, priority: false },
  parse: (u) => ({ key: u.secret(u.host, "the bot key") }),
  request: (t, m) => ({
    ...json(withQuery("https://qyapi.weixin.qq.com/cgi-bin/webhook/send", { key: t.key }), {
      msgtype: "markdown",
      markdown: { content: m.title ? `# ${m.title}\n${asMarkdown(m)}` : asMarkdown(m) },
    }),
    okWhen: { field: "errcode", equals: 0 },
  }),
});
