import { bearer, channel, json } from "../channel";
import { keyThenFrom, mailHtml, mailText, subject } from "../email";

export default channel({
  schemes: ["mailersend"],
  service: "MailerSend",
  category: "email",
  grammar: "mailersend://api_token:from_user@domain[/to_email…][?name=…]",
  docs: "https://developers.mailersend.com/api/v1/email.html#send-an-email",
  supports: { title: true, format: "html", attach: false, priority: false },
  parse: (u) => keyThenFrom(u, "the API token"),
  request(t, m) {
    const html = mailHtml(m);
    return json(
      "https://api.mailersend.com/v1/email",
      {
        from: { email: t.from, ...(t.name ? { name: t.name } : {}) },
        to: t.to.map((email) => ({ email })),
        subject: subject(m),
        text: mailText(m),
        ...(html ? { html } : {}),
      },
      { authorization: bearer(t.key) },
    );
  },
});
