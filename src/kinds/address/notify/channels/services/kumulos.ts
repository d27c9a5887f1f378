import { basic, channel, json } from "../channel";
import { asText } from "../message";

export default channel({
  schemes: ["kumulos"],
  service: "Kumulos",
  category: "push",
  grammar: "kumulos://api_key/server_key",
  docs: "https://docs.kumulos.com/messaging/api/#sending-notifications-to-all-installs",
  supports: { title: true, format: "text", attach: false, priority: false },
  parse: (u) => ({ key: u.need(u.host, "the API key"), server: u.secret(u.segments[0], "the server key") }),
  request: (t, m) =>
    json(
      "https://messages.kumulos.com/v2/notifications",
      {
        target: { broadcast: true },
        content: { title: m.title ?? "", message: asText(m) },
      },
      { authorization: basic(t.key, t.server), accept: "application/json" },
    ),
});
