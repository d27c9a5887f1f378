import { channel, json } from "../channel";
import { asText } from "../message";

export default channel({
  schemes: ["signl4"],
  service: "SIGNL4",
  category: "incident",
  grammar: "signl4://team_secret[?service=…&scenario=single_ack|multi_ack|emergency]",
  docs: "https://docs.signl4.com/integrations/webhook/webhook.html",
  supports: { title: true, format: "text", attach: false, priority: false },
  parse: (u) => ({
    secret: u.secret(u.host, "the team secret"),
    service: u.param("service"),
    scenario: u.param("scenario"),
  }),
  request: (t, m) =>
    json(`https://connect.signl4.com/webhook/${t.secret}/`, {
      title: m.title ?? "Zeitvault",
      body: asText(m),
      "X-S4-SourceSystem": "Zeitvault",
      "X-S4-ExternalID": m.id,
      ...(t.service ? { "X-S4-Service": t.service } : {}),
      ...(t.scenario ? { "X-S4-AlertingScenario": t.scenario } : {}),
    }),
});
