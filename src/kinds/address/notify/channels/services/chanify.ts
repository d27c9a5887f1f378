import { channel, form } from "../channel";
import { titled } from "../message";

export default channel({
  schemes: ["chantify", "chanify"],
  service: "Chanify",
  category: "push",
  grammar: "chantify://token",
  docs: "https://github.com/chanify/chanify#http-api",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({ token: u.secret(u.host, "the token") }),
  request: (t, m) => form(`https://api.chanify.net/v1/sender/${t.token}/`, { text: titled(m) }),
});
