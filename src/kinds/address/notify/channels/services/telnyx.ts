import { bearer, channel, json } from "../channel";
import { phone, phones, smsText } from "../sms";

export default channel({
  schemes: ["telnyx"],
  service: "Telnyx SMS",
  category: "sms",
  grammar: "telnyx://api_key@from_phone/to_phone[/to_phone…]",
  docs: "https://developers.telnyx.com/api/messaging/send-message",
  supports: { title: false, format: "text", attach: true, priority: false },
  parse: (u) => ({
    key: u.secret(u.user, "the API key"),
    from: phone(u.need(u.host, "the sending number")),
    to: phones(u, u.segments),
  }),
  request: (t, m) =>
    t.to.map((to) =>
      json(
        "https://api.telnyx.com/v2/messages",
        { from: t.from, to, text: smsText(m), ...(m.attach ? { media_urls: [m.attach] } : {}) },
        { authorization: bearer(t.key) },
      ),
    ),
});
