import { bearer, channel, json } from "../channel";
import { keyThenFrom, mailHtml, mailText, subject } from "../email";

export default channel({
  schemes: ["mailtrap"],
  service: "Mailtrap",
  category: "email",
  grammar: "mailtrap://api_token:from_user@domain[/to_email…][?name=…]",
  docs: "https://api-docs.mailtrap.io/docs/mailtrap-api-docs/67f1d70aeb62c-send-email-including-templates",
  supports: { title: true, format: "html", attach: false, priority: false },
  parse: (u) => keyThenFrom(u, "the API token"),
  request(t, m) {
    const html = mailHtml(m);
    return json(
      "https://send.api.mailtrap.io/api/send",
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
