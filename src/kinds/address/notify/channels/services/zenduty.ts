import { channel, json } from "../channel";
import { asText, level } from "../message";

export default channel({
  schemes: ["zenduty"],
  service: "Zenduty",
  category: "incident",
  grammar: "zenduty://integration_key",
  docs: "https://docs.zenduty.com/docs/api/#create-an-event",
  supports: { title: true, format: "text", attach: false, priority: true },
  parse: (u) => ({ key: u.secret(u.host, "the integration key") }),
  request: (t, m) =>
    json(`https://www.zenduty.com/api/events/${t.key}/`, {
      alert_type: level(m.priority, ["info", "info", "warning", "error", "critical"]),
      message: m.title ?? asText(m).slice(0, 200),
      summary: asText(m),
      entity_id: m.id,
    }),
});
