import { channel, json } from "../channel";
import { keyThenFrom, mailHtml, mailText, named, subject } from "../email";

export default channel({
  schemes: ["elasticemail"],
  service: "Elastic Email",
  category: "email",
  grammar: "elasticemail://api_key:from_user@domain[/to_email…][?name=…]",
  docs: "https://elasticemail.com/developers/api-documentation/rest-api#operation/emailsTransactionalPost",
  supports: { title: true, format: "html", attach: false, priority: false },
  parse: (u) => keyThenFrom(u),
  request(t, m) {
    const html = mailHtml(m);
    return json(
      "https://api.elasticemail.com/v4/emails/transactional",
      {
        Recipients: { To: t.to },
        Content: {
          From: named(t),
          Subject: subject(m),
          Body: [
            { ContentType: "PlainText", Content: mailText(m) },
            ...(html ? [{ ContentType: "HTML", Content: html }] : []),
          ],
        },
      },
      { "x-elasticemail-apikey": t.key },
    );
  },
});
