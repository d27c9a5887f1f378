import { channel, json } from "../channel";
import { keyThenFrom, mailHtml, mailText, subject } from "../email";

export default channel({
  schemes: ["zeptomail"],
  service: "ZeptoMail",
  category: "email",
  grammar: "zeptomail://send_mail_token:from_user@domain[/to_email…][?name=…]",
  docs: "https://www.zoho.com/zeptomail/help/api/email-sending.html",
  supports: { title: true, format: "html", attach: false, priority: false },
  parse: (u) => keyThenFrom(u, "the Send Mail token"),
  request(t, m) {
    const html = mailHtml(m);
    return json(
      "https://api.zeptomail.com/v1.1/email",
      {
        from: { address: t.from, ...(t.name ? { name: t.name } : {}) },
        to: t.to.map((address) => ({ email_address: { address } })),
        subject: subject(m),
        textbody: mailText(m),
        ...(html ? { htmlbody: html } : {}),
      },
      { authorization: `Zoho-enczapikey ${t.key}`, accept: "application/json" },
    );
  },
});
