import { basic, channel, json } from "../channel";
import { bare, phone, phones, smsText } from "../sms";

export default channel({
  schemes: ["bulkvs"],
  service: "BulkVS SMS",
  category: "sms",
  grammar: "bulkvs://user:api_password@from_phone/to_phone[/to_phone…]",
  docs: "https://portal.bulkvs.com/api/v1.0/documentation#/messaging/post_messageSend",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({
    auth: basic(u.secret(u.user, "the user"), u.secret(u.password, "the API password")),
    from: bare(phone(u.need(u.host, "the sending number"))),
    to: phones(u, u.segments).map(bare),
  }),
  request: (t, m) =>
    json(
      "https://portal.bulkvs.com/api/v1.0/messageSend",
      { From: t.from, To: t.to, Message: smsText(m, 160) },
      { authorization: t.auth },
    ),
});
