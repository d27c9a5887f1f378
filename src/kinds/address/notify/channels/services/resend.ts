import { bearer, channel, json } from "../channel";
import { keyThenFrom, mailHtml, mailText, named, subject } from "../email";

export default channel({
  schemes: ["resend"],
  service: "Resend",
  category: "email",
  grammar: "resend://api_key:from_user@domain[/to_email…][?name=…]",
  docs: "https://resend.com/docs/api-reference/emails/send-email",
  supports: { title: true, format: "html", attach: false, priority: false },
  parse: (u) => keyThenFrom(u),
  request(t, m) {
    const html = mailHtml(m);
    return json(
      "https://api.resend.com/emails",
      { from: named(t), to: t.to, subject: subject(m), text: mailText(m), ...(html ? { html } : {}) },
      { authorization: bearer(t.key), "idempotency-key": m.id },
    );
  },
});
