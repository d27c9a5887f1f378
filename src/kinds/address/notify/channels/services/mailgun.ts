import { basic, channel, form } from "../channel";
import { fromThenKey, mailHtml, mailText, named, subject } from "../email";

export default channel({
  schemes: ["mailgun"],
  service: "Mailgun",
  category: "email",
  grammar: "mailgun://from_user@domain/api_key[/to_email…][?region=us|eu&name=…]",
  docs: "https://documentation.mailgun.com/docs/mailgun/api-reference/openapi-final/tag/Messages/",
  supports: { title: true, format: "html", attach: false, priority: false },
  parse: (u) => ({ ...fromThenKey(u), domain: u.host, eu: u.param("region") === "eu" }),
  request: (t, m) =>
    form(
      `https://api.${t.eu ? "eu." : ""}mailgun.net/v3/${encodeURIComponent(t.domain)}/messages`,
      {
        from: named(t),
        to: t.to.join(","),
        subject: subject(m),
        text: mailText(m),
        html: mailHtml(m),
      },
      { authorization: basic("api", t.key) },
    ),
});
