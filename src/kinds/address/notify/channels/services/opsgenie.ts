import { channel, json } from "../channel";
import { asText, clip, level } from "../message";

/**
 * An alert (US or EU region), to the integration's default team or to @user / #team / *schedule / ^escalation
 * responders.
 */
export default channel({
  schemes: ["opsgenie"],
  service: "Opsgenie",
  category: "incident",
  grammar: "opsgenie://api_key[/@user|/#team|/*schedule|/^escalation…][?region=us|eu]",
  docs: "https://docs.opsgenie.com/docs/alert-api#create-alert",
  supports: { title: true, format: "text", attach: false, priority: true },
  parse: (u) => ({
    key: u.secret(u.host, "the API key"),
    eu: (u.param("region") ?? "us").toLowerCase() === "eu",
    targets: u.segments,
  }),
  request(t, m) {
    const kinds: Record<string, [string, string]> = {
      "@": ["user", "username"],
      "#": ["team", "name"],
      "*": ["schedule", "name"],
      "^": ["escalation", "name"],
    };
    const responders = t.targets.map((x) => {
      const [type, field] = kinds[x[0]!] ?? ["user", "username"];
      return { type, [field]: kinds[x[0]!] ? x.slice(1) : x };
    });
    return json(
      `https://api.${t.eu ? "eu." : ""}opsgenie.com/v2/alerts`,
      {
        source: "Zeitvault",
        message: clip(m.title ?? asText(m), 130),
        description: clip(asText(m), 15000),
        priority: level(m.priority, ["P5", "P4", "P3", "P2", "P1"]),
        alias: m.id,
        tags: m.tags,
        ...(responders.length ? { responders } : {}),
      },
      { authorization: `GenieKey ${t.key}` },
    );
  },
});
