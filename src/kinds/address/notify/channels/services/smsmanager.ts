import { channel, withQuery } from "../channel";
import { bare, phones, smsText } from "../sms";

export default channel({
  schemes: ["smsmgr"],
  service: "SMS Manager",
  category: "sms",
  grammar: "smsmgr://api_key@to_phone[/to_phone…][?gateway=high|economy|low|direct]",
  docs: "https://smsmanager.cz/api/http#send",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({
    key: u.secret(u.user, "the API key"),
    to: phones(u, [u.host, ...u.segments].filter(Boolean)).map(bare),
    gateway: u.param("gateway") ?? "high",
  }),
  request: (t, m) => ({
    method: "GET" as const,
    headers: {},
    body: null,
    url: withQuery("https://http-api.smsmanager.cz/Send", {
      apikey: t.key,
      number: t.to.join(";"),
      message: smsText(m),
      gateway: t.gateway,
    }),
  }),
});
