import { channel, form } from "../channel";
import { phones, smsText } from "../sms";

export default channel({
  schemes: ["textbelt"],
  service: "Textbelt SMS",
  category: "sms",
  grammar: "textbelt://api_key@to_phone[/to_phone…]",
  docs: "https://docs.textbelt.com/",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({ key: u.secret(u.user, "the API key"), to: phones(u, [u.host, ...u.segments].filter(Boolean)) }),
  request: (t, m) =>
    t.to.map((p) => ({
      ...form("https://textbelt.com/text", { phone: p, message: smsText(m, 800), key: t.key }),
      okWhen: { field: "success", equals: true },
    })),
});
