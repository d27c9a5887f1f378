import { channel, form } from "../channel";
import { bare, phone, phones, smsText } from "../sms";

export default channel({
  schemes: ["kavenegar"],
  service: "Kavenegar SMS",
  category: "sms",
  grammar: "kavenegar://[from_phone@]api_key/to_phone[/to_phone…]",
  docs: "https://kavenegar.com/rest.html#sms-send",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({
    key: u.secret(u.host, "the API key"),
    from: u.user ? bare(phone(u.user)) : null,
    to: phones(u, u.segments).map(bare),
  }),
  request: (t, m) =>
    t.to.map((receptor) =>
      form(`https://api.kavenegar.com/v1/${t.key}/sms/send.json`, { receptor, message: smsText(m), sender: t.from }),
    ),
});
