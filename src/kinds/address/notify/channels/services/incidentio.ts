import { bearer, channel, json } from "../channel";
import { asText } from "../message";

/** An HTTP alert source: a firing alert, deduplicated by the send's id. */
export default channel({
  schemes: ["incidentio"],
  service: "incident.io",
  category: "incident",
  grammar: "incidentio://api_token@alert_source_config_id",
  docs: "https://api-docs.incident.io/tag/Alert-Events-V2",
  supports: { title: true, format: "text", attach: false, priority: true },
  parse: (u) => ({
    token: u.secret(u.user, "the alert source token"),
    source: u.need(u.host, "the alert source config id"),
  }),
  request: (t, m) =>
    json(
      `https://api.incident.io/v2/alert_events/http/${encodeURIComponent(t.source)}`,
      {
        title: m.title ?? asText(m).slice(0, 200),
        description: asText(m),
        status: "firing",
        deduplication_key: m.id,
        metadata: { priority: m.priority, tags: m.tags },
      },
      { authorization: bearer(t.token) },
    ),
});
