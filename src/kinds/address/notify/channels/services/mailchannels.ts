import { channel, json } from "../channel";
import { keyThenFrom, mailHtml, mailText, subject } from "../email";

export default channel({
  schemes: ["mailchannels"],
  service: "MailChannels",
  category: "email",
  grammar: "mailchannels://api_key:from_user@domain[/to_email…][?name=…]",
  docs: "https://docs.mailchannels.net/email-api/api-reference/send-an-email",
  supports: { title: true, format: "html", attach: false, priority: false },
  parse: (u) => keyThenFrom(u),
  request(t, m) {
    const html = mailHtml(m);
    return json(
      "https://api.mailchannels.net/tx/v1/send",
      {
        personalizations: [{ to: t.to.map((email) => ({ email })) }],
        from: { email: t.from, ...(t.name ? { name: t.name } : {}) },
        subject: subject(m),
        content: [{ type: "text/plain", value: mailText(m) }, ...(html ? [{ type: "text/html", value: html }] : [])],
      },
      { "x-api-key": t.key },
    );
  },
});
