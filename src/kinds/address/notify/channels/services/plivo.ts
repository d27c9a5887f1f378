import { basic, channel, json } from "../channel";
import { bare, phone, phones, smsText } from "../sms";

export default channel({
  schemes: ["plivo"],
  service: "Plivo SMS",
  category: "sms",
  grammar: "plivo://auth_id@auth_token/from_phone/to_phone[/to_phone…]",
  docs: "https://www.plivo.com/docs/messaging/api/message#send-a-message",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({
    id: u.need(u.user, "the auth id"),
    auth: basic(u.user ?? "", u.secret(u.host, "the auth token")),
    from: bare(phone(u.need(u.segments[0], "the sending number"))),
    to: phones(u, u.segments.slice(1)).map(bare),
  }),
  request: (t, m) =>
    json(
      `https://api.plivo.com/v1/Account/${encodeURIComponent(t.id)}/Message/`,
      { src: t.from, dst: t.to.join("<"), text: smsText(m) },
      { authorization: t.auth },
    ),
});
