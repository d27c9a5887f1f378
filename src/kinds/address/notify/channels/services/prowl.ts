import { channel, form } from "../channel";
import { asText, clip, level } from "../message";

export default channel({
  schemes: ["prowl"],
  service: "Prowl",
  category: "push",
  grammar: "prowl://api_key[/provider_key]",
  docs: "https://www.prowlapp.com/api.php#add",
  supports: { title: true, format: "text", attach: true, priority: true },
  parse: (u) => ({
    key: u.secret(u.host, "the API key"),
    provider: u.segments[0] ? u.secret(u.segments[0], "the provider key") : null,
  }),
  request: (t, m) =>
    form("https://api.prowlapp.com/publicapi/add", {
      apikey: t.key,
      providerkey: t.provider,
      application: "Zeitvault",
      event: clip(m.title ?? "Notification", 1024),
      description: clip(asText(m), 10000),
      priority: level(m.priority, [-2, -1, 0, 1, 2]),
      url: m.attach,
    }),
});
