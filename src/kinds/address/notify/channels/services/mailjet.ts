import { basic, channel, json } from "../channel";
import { mailHtml, mailText, subject } from "../email";
import { ChannelUrlError } from "../url";

export default channel({
  schemes: ["mailjet"],
  service: "Mailjet",
  category: "email",
  grammar: "mailjet://api_key:secret_key@domain/from_user[/to_email…][?name=…]",
  docs: "https://dev.mailjet.com/email/reference/send-emails/#v3_1_post_send",
  supports: { title: true, format: "html", attach: false, priority: false },
  parse(u) {
    const [user, ...to] = u.segments;
    if (!user)
      throw new ChannelUrlError("needs the sender's user part after the domain (mailjet://key:secret@domain/user/to)");
    const from = `${user}@${u.need(u.host, "the sender's domain")}`;
    return {
      auth: basic(u.secret(u.user, "the API key"), u.secret(u.password, "the secret key")),
      from,
      to: to.length ? to : [from],
      name: u.param("name"),
    };
  },
  request(t, m) {
    const html = mailHtml(m);
    return json(
      "https://api.mailjet.com/v3.1/send",
      {
        Messages: [
          {
            From: { Email: t.from, ...(t.name ? { Name: t.name } : {}) },
            To: t.to.map((Email) => ({ Email })),
            Subject: subject(m),
            TextPart: mailText(m),
            ...(html ? { HTMLPart: html } : {}),
          },
        ],
      },
      { authorization: t.auth },
    );
  },
});
