import { channel, json } from "../channel";
import { asText, level } from "../message";

/** Splunk On-Call (VictorOps) REST endpoint integration. */
export default channel({
  schemes: ["splunk", "victorops"],
  service: "Splunk On-Call (VictorOps)",
  category: "incident",
  grammar: "splunk://routing_key@api_key[/entity_id]",
  docs: "https://help.victorops.com/knowledge-base/rest-endpoint-integration-guide/",
  supports: { title: true, format: "text", attach: false, priority: true },
  parse: (u) => ({
    routing: u.need(u.user, "the routing key"),
    key: u.secret(u.host, "the REST endpoint API key"),
    entity: u.segments[0] ?? null,
  }),
  request: (t, m) =>
    json(`https://alert.victorops.com/integrations/generic/20131114/alert/${t.key}/${encodeURIComponent(t.routing)}`, {
      entity_id: t.entity ?? `Zeitvault/${t.routing}`,
      message_type: level(m.priority, ["INFO", "INFO", "INFO", "WARNING", "CRITICAL"]),
      entity_display_name: m.title ?? "Zeitvault",
      state_message: asText(m),
      monitoring_tool: "Zeitvault",
    }),
});
