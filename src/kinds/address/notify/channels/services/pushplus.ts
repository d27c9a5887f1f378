import { channel, json } from "../channel";
import { asHtml, asMarkdown } from "../message";

export default channel({
  schemes: ["pushplus"],
  service: "PushPlus",
  category: "push",
  grammar: "pushplus://token[?topic=…]",
  docs: "https://www.pushplus.plus/doc/guide/api.html",
  supports: { title: true, format: "html", attach: false, priority: false },
  parse: (u) => ({ token: u.secret(u.host, "the token"), topic: u.param("topic") }),
  request: (t, m) => ({
    ...json("https://www.pushplus.plus/send", {
      token: t.token,
      title: m.title ?? asMarkdown(m).slice(0, 100),
      content: m.format === "markdown" ? asMarkdown(m) : asHtml(m),
      template: m.format === "markdown" ? "markdown" : "html",
      ...(t.topic ? { topic: t.topic } : {}),
    }),
    okWhen: { field: "code", equals: 200 },
  }),
});
