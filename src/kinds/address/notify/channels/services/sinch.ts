import { bearer, channel, json } from "../channel";
import { bare, phone, phones, smsText } from "../sms";

export default channel({
  schemes: ["sinch"],
  service: "Sinch SMS",
  category: "sms",
  grammar: "sinch://service_plan_id:api_token@from_phone/to_phone[/to_phone…][?region=us|eu]",
  docs: "https://developers.sinch.com/docs/sms/api-reference/sms/tag/Batches/#tag/Batches/operation/SendSMS",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({
    plan: u.need(u.user, "the service plan id"),
    token: u.secret(u.password, "the API token"),
    from: bare(phone(u.need(u.host, "the sending number"))),
    to: phones(u, u.segments),
    region: u.param("region") === "eu" ? "eu" : "us",
  }),
  request: (t, m) =>
    json(
      `https://${t.region}.sms.api.sinch.com/xms/v1/${encodeURIComponent(t.plan)}/batches`,
      { from: t.from, to: t.to, body: smsText(m) },
      { authorization: bearer(t.token) },
    ),
});
