import { channel, form } from "../channel";
import { asMarkdown, clip } from "../message";

export default channel({
  schemes: ["schan"],
  service: "ServerChan",
  category: "push",
  grammar: "schan://send_key",
  docs: "https://sct.ftqq.com/sendkey",
  supports: { title: true, format: "markdown", attach: false, priority: false },
  parse: (u) => ({ key: u.secret(u.host, "the send key") }),
  request: (t, m) => ({
    ...form(`https://sctapi.ftqq.com/${t.key}.send`, {
      title: clip(m.title ?? "Notification", 32),
      desp: asMarkdown(m),
    }),
    okWhen: { field: "code", equals: 0 },
  }),
});
