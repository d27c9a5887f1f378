import { channel, json } from "../channel";
import { bare, phone, phones, smsText } from "../sms";

export default channel({
  schemes: ["msgbird"],
  service: "MessageBird (Bird) SMS",
  category: "sms",
  grammar: "msgbird://access_key/from_phone[/to_phone…]",
  docs: "https://developers.messagebird.com/api/sms-messaging/#send-outbound-sms",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => {
    const from = bare(phone(u.need(u.segments[0], "the sending number")));
    return {
      key: u.secret(u.host, "the access key"),
      from,
      to: u.segments.length > 1 ? phones(u, u.segments.slice(1)).map(bare) : [from],
    };
  },
  request: (t, m) =>
    json(
      "https://rest.messagebird.com/messages",
      { originator: t.from, recipients: t.to, body: smsText(m) },
      { authorization: `AccessKey ${t.key}` },
    ),
});
