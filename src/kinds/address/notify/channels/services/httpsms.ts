import { channel, json } from "../channel";
import { phone, phones, smsText } from "../sms";

/** httpSMS sends from your own Android phone's number. */
export default channel({
  schemes: ["httpsms"],
  service: "httpSMS",
  category: "sms",
  grammar: "httpsms://api_key@from_phone/to_phone[/to_phone…]",
  docs: "https://api.httpsms.com/index.html#/Messages/post_messages_send",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({
    key: u.secret(u.user, "the API key"),
    from: phone(u.need(u.host, "the sending number")),
    to: phones(u, u.segments),
  }),
  request: (t, m) =>
    t.to.map((to) =>
      json(
        "https://api.httpsms.com/v1/messages/send",
        { from: t.from, to, content: smsText(m) },
        { "x-api-key": t.key },
      ),
    ),
});
