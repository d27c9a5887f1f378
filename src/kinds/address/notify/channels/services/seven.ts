import { channel, json } from "../channel";
import { phones, smsText } from "../sms";

export default channel({
  schemes: ["seven", "sevens"],
  service: "seven SMS",
  category: "sms",
  grammar: "seven://api_key/to_phone[/to_phone…][?from=…]",
  docs: "https://docs.seven.io/en/rest-api/endpoints/sms#send-sms",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({ key: u.secret(u.host, "the API key"), to: phones(u, u.segments), from: u.param("from", "source") }),
  request: (t, m) =>
    json(
      "https://gateway.seven.io/api/sms",
      { to: t.to.join(","), text: smsText(m), ...(t.from ? { from: t.from } : {}) },
      { "x-api-key": t.key, accept: "application/json" },
    ),
});
