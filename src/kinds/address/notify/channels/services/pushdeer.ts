import { channel, form } from "../channel";
import { asMarkdown } from "../message";

export default channel({
  schemes: ["pushdeer", "pushdeers"],
  service: "PushDeer",
  category: "push",
  grammar: "pushdeer[s]://[host[:port]/]push_key",
  docs: "https://www.pushdeer.com/dev.html",
  supports: { title: true, format: "markdown", attach: false, priority: false },
  parse: (u) =>
    u.segments.length
      ? { origin: u.origin(), key: u.secret(u.segments[0], "the push key") }
      : { origin: "https://api2.pushdeer.com", key: u.secret(u.host, "the push key") },
  request: (t, m) => ({
    ...form(`${t.origin}/message/push`, {
      pushkey: t.key,
      text: m.title ?? asMarkdown(m),
      desp: m.title ? asMarkdown(m) : "",
      type: "markdown",
    }),
    okWhen: { field: "code", equals: 0 },
  }),
});
