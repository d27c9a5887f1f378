import { channel, json } from "../channel";
import { asText, level } from "../message";

export default channel({
  schemes: ["squadcast"],
  service: "Squadcast",
  category: "incident",
  grammar: "squadcast://api_key",
  docs: "https://support.squadcast.com/integrations/incident-webhook-incident-webhook-api",
  supports: { title: true, format: "text", attach: false, priority: true },
  parse: (u) => ({ key: u.secret(u.host, "the incident webhook key") }),
  request: (t, m) =>
    json(`https://api.squadcast.com/v2/incidents/api/${t.key}`, {
      message: m.title ?? asText(m).slice(0, 200),
      description: asText(m),
      status: "trigger",
      event_id: m.id,
      tags: { priority: level(m.priority, ["P5", "P4", "P3", "P2", "P1"]) },
    }),
});
