import { channel, json } from "../channel";
import { fromThenKey, mailHtml, mailText, named, subject } from "../email";

export default channel({
  schemes: ["smtp2go"],
  service: "SMTP2GO",
  category: "email",
  grammar: "smtp2go://from_user@domain/api_key[/to_email…][?name=…]",
  docs: "https://developers.smtp2go.com/docs/send-an-email",
  supports: { title: true, format: "html", attach: false, priority: false },
  parse: (u) => fromThenKey(u),
  request(t, m) {
    const html = mailHtml(m);
    return json(
      "https://api.smtp2go.com/v3/email/send",
      { sender: named(t), to: t.to, subject: subject(m), text_body: mailText(m), ...(html ? { html_body: html } : {}) },
      { "x-smtp2go-api-key": t.key, accept: "application/json" },
    );
  },
});
