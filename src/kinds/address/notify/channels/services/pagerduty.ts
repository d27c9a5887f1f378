import { channel, json } from "../channel";
import { asText, clip, level } from "../message";

/** Events API v2: a trigger, deduplicated by the send's id. */
export default channel({
  schemes: ["pagerduty"],
  service: "PagerDuty",
  category: "incident",
  grammar: "pagerduty://integration_key[@api_key][/source[/component]][?region=us|eu]",
  docs: "https://developer.pagerduty.com/api-reference/368ae3d938c9e-send-an-event-to-pager-duty",
  supports: { title: true, format: "text", attach: true, priority: true },
  parse(u) {
    // Apprise writes integration_key@api_key; Events v2 needs only the integration key, but both are masked.
    if (u.user) u.secret(u.host, "the API key");
    return {
      key: u.secret(u.user ?? u.host, "the integration (routing) key"),
      source: u.segments[0] ?? "Zeitvault",
      component: u.segments[1] ?? null,
      eu: u.param("region") === "eu",
    };
  },
  request: (t, m) =>
    json(`https://events.${t.eu ? "eu." : ""}pagerduty.com/v2/enqueue`, {
      routing_key: t.key,
      event_action: "trigger",
      dedup_key: m.id,
      client: "Zeitvault",
      payload: {
        summary: clip(m.title ? `${m.title}: ${asText(m)}` : asText(m), 1024),
        severity: level(m.priority, ["info", "info", "warning", "error", "critical"]),
        source: t.source,
        ...(t.component ? { component: t.component } : {}),
        custom_details: { body: asText(m), tags: m.tags },
      },
      ...(m.attach ? { images: [{ src: m.attach }] } : {}),
    }),
});
