import { channel, json } from "../channel";
import { asText } from "../message";

export default channel({
  schemes: ["push"],
  service: "Techulus Push",
  category: "push",
  grammar: "push://api_key",
  docs: "https://docs.push.techulus.com/api-documentation",
  supports: { title: true, format: "text", attach: false, priority: false },
  parse: (u) => ({ key: u.secret(u.host, "the API key") }),
  request: (t, m) =>
    json("https://push.techulus.com/api/v1/notify", { title: m.title ?? "", body: asText(m) }, { "x-api-key": t.key }),
});
