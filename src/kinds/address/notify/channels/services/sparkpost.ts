import { channel, json } from "../channel";
import { fromThenKey, mailHtml, mailText, subject } from "../email";

export default channel({
  schemes: ["sparkpost"],
  service: "SparkPost",
  category: "email",
  grammar: "sparkpost://from_user@domain/api_key[/to_email…][?region=us|eu&name=…]",
  docs: "https://developers.sparkpost.com/api/transmissions/#transmissions-post-send-inline-content",
  supports: { title: true, format: "html", attach: false, priority: false },
  parse: (u) => ({ ...fromThenKey(u), eu: u.param("region") === "eu" }),
  request(t, m) {
    const html = mailHtml(m);
    return json(
      `https://api.${t.eu ? "eu." : ""}sparkpost.com/api/v1/transmissions`,
      {
        recipients: t.to.map((email) => ({ address: { email } })),
        content: {
          from: { email: t.from, ...(t.name ? { name: t.name } : {}) },
          subject: subject(m),
          text: mailText(m),
          ...(html ? { html } : {}),
        },
      },
      { authorization: t.key },
    );
  },
});
