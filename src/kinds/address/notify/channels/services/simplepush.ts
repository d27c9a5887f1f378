import { channel, form } from "../channel";
import { asText } from "../message";

export default channel({
  schemes: ["spush"],
  service: "SimplePush",
  category: "push",
  grammar: "spush://key[?event=…]",
  docs: "https://simplepush.io/api",
  supports: { title: true, format: "text", attach: false, priority: false },
  parse: (u) => ({ key: u.secret(u.host, "the key"), event: u.param("event") }),
  request: (t, m) => ({
    ...form("https://api.simplepush.io/send", {
      key: t.key,
      title: m.title ?? undefined,
      msg: asText(m),
      event: t.event,
    }),
    okWhen: { field: "status", equals: "OK" },
  }),
});
