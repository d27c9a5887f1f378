import { bearer, channel, json } from "../channel";
import { keyThenFrom, mailHtml, mailText, subject } from "../email";

export default channel({
  schemes: ["sendgrid"],
  service: "SendGrid",
  category: "email",
  grammar: "sendgrid://api_key:from_user@domain[/to_email…][?name=…]",
  docs: "https://www.twilio.com/docs/sendgrid/api-reference/mail-send/mail-send",
  supports: { title: true, format: "html", attach: false, priority: false },
  parse: (u) => keyThenFrom(u),
  request(t, m) {
    const html = mailHtml(m);
    return json(
      "https://api.sendgrid.com/v3/mail/send",
      {
        personalizations: t.to.map((email) => ({ to: [{ email }] })),
        from: { email: t.from, ...(t.name ? { name: t.name } : {}) },
        subject: subject(m),
        content: [{ type: "text/plain", value: mailText(m) }, ...(html ? [{ type: "text/html", value: html }] : [])],
      },
      { authorization: bearer(t.key) },
    );
  },
});
