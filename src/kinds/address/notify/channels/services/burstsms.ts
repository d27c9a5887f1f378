import { basic, channel, form } from "../channel";
import { bare, phones, smsText } from "../sms";

export default channel({
  schemes: ["burstsms"],
  service: "Burst SMS",
  category: "sms",
  grammar: "burstsms://api_key:api_secret@sender_id/to_phone[/to_phone…][?country=au]",
  docs: "https://developer.transmitsms.com/#send-sms",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({
    auth: basic(u.secret(u.user, "the API key"), u.secret(u.password, "the API secret")),
    from: u.need(u.host, "the sender id"),
    to: phones(u, u.segments).map(bare),
    country: (u.param("country") ?? "au").toUpperCase(),
  }),
  request: (t, m) =>
    form(
      "https://api.transmitsms.com/send-sms.json",
      { message: smsText(m), to: t.to.join(","), from: t.from, countrycode: t.country },
      { authorization: t.auth },
    ),
});
