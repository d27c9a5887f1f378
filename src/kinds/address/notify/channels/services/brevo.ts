import { channel, json } from "../channel";
import { keyThenFrom, mailHtml, mailText, subject } from "../email";

export default channel({
  schemes: ["brevo", "sendinblue"],
  service: "Brevo",
  category: "email",
  grammar: "brevo://api_key:from_user@domain[/to_email…][?name=…]",
  docs: "https://developers.brevo.com/reference/sendtransacemail",
  supports: { title: true, format: "html", attach: false, priority: false },
  parse: (u) => keyThenFrom(u),
  request(t, m) {
    const html = mailHtml(m);
    return json(
      "https://api.brevo.com/v3/smtp/email",
      {
        sender: { email: t.from, ...(t.name ? { name: t.name } : {}) },
        to: t.to.map((email) => ({ email })),
        subject: subject(m),
        textContent: mailText(m),
        ...(html ? { htmlContent: html } : {}),
      },
      { "api-key": t.key, accept: "application/json" },
    );
  },
});
