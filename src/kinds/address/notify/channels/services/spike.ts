import { channel, json } from "../channel";
import { asText } from "../message";

export default channel({
  schemes: ["spike"],
  service: "Spike.sh",
  category: "incident",
  grammar: "spike://integration_token",
  docs: "https://docs.spike.sh/integrations/webhooks",
  supports: { title: true, format: "text", attach: false, priority: false },
  parse: (u) => ({ token: u.secret(u.host, "the integration token") }),
  request: (t, m) =>
    json(`https://api.spike.sh/v1/alerts/${t.token}`, { message: m.title ?? asText(m), description: asText(m) }),
});
