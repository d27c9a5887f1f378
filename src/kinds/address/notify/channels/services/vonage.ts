import { channel, form } from "../channel";
import { bare, phone, phones, smsText } from "../sms";

export default channel({
  schemes: ["vonage", "nexmo"],
  service: "Vonage SMS",
  category: "sms",
  grammar: "vonage://api_key:api_secret@from_phone/to_phone[/to_phone…]",
  docs: "https://developer.vonage.com/en/api/sms#send-an-sms",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({
    key: u.need(u.user, "the API key"),
    secret: u.secret(u.password, "the API secret"),
    from: bare(phone(u.need(u.host, "the sending number"))),
    to: phones(u, u.segments).map(bare),
  }),
  request: (t, m) =>
    t.to.map((to) => ({
      ...form("https://rest.nexmo.com/sms/json", {
        api_key: t.key,
        api_secret: t.secret,
        from: t.from,
        to,
        text: smsText(m),
      }),
      okWhen: { field: "messages.0.status", equals: "0" },
    })),
});
