import { basic, channel, form } from "../channel";
import { phone, phones, smsText } from "../sms";

export default channel({
  schemes: ["twilio"],
  service: "Twilio SMS",
  category: "sms",
  grammar: "twilio://account_sid:auth_token@from_phone|short_code/to_phone[/to_phone…]",
  docs: "https://www.twilio.com/docs/messaging/api/message-resource#create-a-message-resource",
  supports: { title: false, format: "text", attach: true, priority: false },
  parse: (u) => ({
    sid: u.need(u.user, "the account SID"),
    auth: basic(u.user ?? "", u.secret(u.password, "the auth token")),
    from: phone(u.need(u.host, "the sending number")),
    to: phones(u, u.segments),
  }),
  request: (t, m) =>
    t.to.map((To) =>
      form(
        `https://api.twilio.com/2010-04-01/Accounts/${encodeURIComponent(t.sid)}/Messages.json`,
        { To, From: t.from, Body: smsText(m), MediaUrl: m.attach },
        { authorization: t.auth },
      ),
    ),
});
