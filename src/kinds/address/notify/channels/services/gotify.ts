import { channel, json } from "../channel";
import { asMarkdown, level } from "../message";

export default channel({
  schemes: ["gotify", "gotifys"],
  service: "Gotify",
  category: "push",
  grammar: "gotify[s]://host[:port][/path]/app_token",
  docs: "https://gotify.net/api-docs#/message/createMessage",
  supports: { title: true, format: "markdown", attach: false, priority: true },
  parse(u) {
    const token = u.secret(u.segments[u.segments.length - 1], "the application token");
    const path = u.segments.slice(0, -1).map(encodeURIComponent).join("/");
    return { url: `${u.origin()}/${path ? `${path}/` : ""}message`, token };
  },
  request: (t, m) =>
    json(
      t.url,
      {
        title: m.title ?? "",
        message: asMarkdown(m),
        priority: level(m.priority, [0, 2, 5, 8, 10]),
        extras: { "client::display": { contentType: m.format === "text" ? "text/plain" : "text/markdown" } },
      },
      { "x-gotify-key": t.token },
    ),
});
