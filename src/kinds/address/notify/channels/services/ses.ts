import { channel, json } from "../channel";
import { mailHtml, mailText, subject } from "../email";
import { ChannelUrlError } from "../url";

/** SES API v2 SendEmail, signed per attempt (AWS Signature V4). */
export default channel({
  schemes: ["ses"],
  service: "Amazon SES",
  category: "email",
  grammar: "ses://from_user@domain/access_key_id/secret_access_key/region[/to_email…]",
  docs: "https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_SendEmail.html",
  supports: { title: true, format: "html", attach: false, priority: false },
  parse(u) {
    const from = `${u.need(u.user, "the sender's user part")}@${u.need(u.host, "the sender's domain")}`;
    const [keyId, secret, region, ...to] = u.segments;
    if (!region || !/^[a-z]{2}(-[a-z]+)+-\d$/.test(region))
      throw new ChannelUrlError("needs an AWS region (us-east-1)");
    return {
      from,
      to: to.length ? to : [from],
      aws: {
        accessKeyId: u.need(keyId, "the access key id"),
        secretAccessKey: u.secret(secret, "the secret access key"),
        region,
        service: "ses",
      },
    };
  },
  request(t, m) {
    const html = mailHtml(m);
    return {
      ...json(`https://email.${t.aws.region}.amazonaws.com/v2/email/outbound-emails`, {
        FromEmailAddress: t.from,
        Destination: { ToAddresses: t.to },
        Content: {
          Simple: {
            Subject: { Data: subject(m), Charset: "UTF-8" },
            Body: {
              Text: { Data: mailText(m), Charset: "UTF-8" },
              ...(html ? { Html: { Data: html, Charset: "UTF-8" } } : {}),
            },
          },
        },
      }),
      aws: t.aws,
    };
  },
});
