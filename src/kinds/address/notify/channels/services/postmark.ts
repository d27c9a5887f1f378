import { channel, json } from "../channel";
import { keyThenFrom, mailHtml, mailText, named, subject } from "../email";

export default channel({
  schemes: ["postmark"],
  service: "Postmark",
  category: "email",
  grammar: "postmark://server_token:from_user@domain[/to_email…][?name=…]",
  docs: "https://postmarkapp.com/developer/api/email-api#send-a-single-email",
  supports: { title: true, format: "html", attach: false, priority: false },
  parse: (u) => keyThenFrom(u, "the server token"),
  request(t, m) {
    const html = mailHtml(m);
    return json(
      "https://api.postmarkapp.com/email",
      {
        From: named(t),
        To: t.to.join(","),
        Subject: subject(m),
        TextBody: mailText(m),
        ...(html ? { HtmlBody: html } : {}),
        MessageStream: "outbound",
      },
      { "x-postmark-server-token": t.key, accept: "application/json" },
    );
  },
});
