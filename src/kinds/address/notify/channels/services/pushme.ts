import { channel, form } from "../channel";
import { asMarkdown, asText } from "../message";

export default channel({
  schemes: ["pushme"],
  service: "PushMe",
  category: "push",
  grammar: "pushme://push_key",
  docs: "https://push.i-i.me/docs/api",
  supports: { title: true, format: "markdown", attach: false, priority: false },
  parse: (u) => ({ key: u.secret(u.host, "the push key") }),
  request: (t, m) =>
    form("https://push.i-i.me/", {
      push_key: t.key,
      title: m.title ?? "",
      content: m.format === "text" ? asText(m) : asMarkdown(m),
      type: m.format === "text" ? "text" : "markdown",
    }),
});
