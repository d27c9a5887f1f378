import { basic, channel, json } from "../channel";
import { phones, smsText } from "../sms";

export default channel({
  schemes: ["clicksend"],
  service: "ClickSend SMS",
  category: "sms",
  grammar: "clicksend://user:api_key@to_phone[/to_phone…]",
  docs: "https://developers.clicksend.com/docs/messaging/sms/send-an-sms",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({
    auth: basic(u.secret(u.user, "the user"), u.secret(u.password, "the API key")),
    to: phones(u, [u.host, ...u.segments].filter(Boolean)),
  }),
  request: (t, m) =>
    json(
      "https://rest.clicksend.com/v3/sms/send",
      { messages: t.to.map((to) => ({ source: "zeitvault", body: smsText(m), to })) },
      { authorization: t.auth },
    ),
});
