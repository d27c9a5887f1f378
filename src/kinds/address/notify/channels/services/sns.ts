import { channel, form } from "../channel";
import { asText, clip } from "../message";
import { phone, smsText } from "../sms";
import { ChannelUrlError } from "../url";

/** Amazon SNS Publish, to phone numbers (SMS) or topics (by ARN); signed per attempt (AWS Signature V4). */
export default channel({
  schemes: ["sns"],
  service: "Amazon SNS",
  category: "sms",
  grammar: "sns://access_key_id/secret_access_key/region/+phone|arn:aws:sns:…:topic[/…]",
  docs: "https://docs.aws.amazon.com/sns/latest/api/API_Publish.html",
  supports: { title: true, format: "text", attach: false, priority: false },
  parse(u) {
    const [secret, region, ...targets] = u.segments;
    if (!region || !/^[a-z]{2}(-[a-z]+)+-\d$/.test(region))
      throw new ChannelUrlError("needs an AWS region (us-east-1)");
    if (!targets.length) throw new ChannelUrlError("needs a phone number or a topic ARN");
    const aws = {
      accessKeyId: u.need(u.host, "the access key id"),
      secretAccessKey: u.secret(secret, "the secret access key"),
      region,
      service: "sns",
    };
    return { aws, targets: targets.map((x) => (x.startsWith("arn:") ? { TopicArn: x } : { PhoneNumber: phone(x) })) };
  },
  request: (t, m) =>
    t.targets.map((target) => ({
      ...form(`https://sns.${t.aws.region}.amazonaws.com/`, {
        Action: "Publish",
        Version: "2010-03-31",
        ...target,
        Message: "PhoneNumber" in target ? smsText(m) : asText(m),
        ...("TopicArn" in target && m.title ? { Subject: clip(m.title, 100) } : {}),
      }),
      aws: t.aws,
    })),
});
