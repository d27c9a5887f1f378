import { bearer, channel, json } from "../channel";
import { bare, phones, smsText } from "../sms";

export default channel({
  schemes: ["d7sms"],
  service: "D7 Networks SMS",
  category: "sms",
  grammar: "d7sms://api_token@to_phone[/to_phone…][?from=…]",
  docs: "https://d7networks.com/docs/Messages/Send_Message/",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({
    token: u.secret(u.user, "the API token"),
    to: phones(u, [u.host, ...u.segments].filter(Boolean)).map(bare),
    from: u.param("from", "source") ?? "SMSInfo",
  }),
  request: (t, m) =>
    json(
      "https://api.d7networks.com/messages/v1/send",
      {
        messages: [{ channel: "sms", recipients: t.to, content: smsText(m), msg_type: "text", data_coding: "text" }],
        message_globals: { originator: t.from },
      },
      { authorization: bearer(t.token), accept: "application/json" },
    ),
});
