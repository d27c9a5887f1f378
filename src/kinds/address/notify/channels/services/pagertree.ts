import { channel, json } from "../channel";
import { asText, level } from "../message";

export default channel({
  schemes: ["pagertree"],
  service: "PagerTree",
  category: "incident",
  grammar: "pagertree://integration_id",
  docs: "https://pagertree.com/docs/integration-guides/webhook",
  supports: { title: true, format: "text", attach: false, priority: true },
  parse: (u) => ({ id: u.secret(u.host, "the integration id") }),
  request: (t, m) =>
    json(`https://api.pagertree.com/integration/${t.id}`, {
      id: m.id,
      event_type: "create",
      title: m.title ?? "Zeitvault",
      description: asText(m),
      tags: m.tags,
      urgency: level(m.priority, ["low", "low", "medium", "high", "critical"]),
    }),
});
