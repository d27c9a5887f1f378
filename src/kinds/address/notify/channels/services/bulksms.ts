import { basic, channel, json } from "../channel";
import { phones, smsText } from "../sms";

export default channel({
  schemes: ["bulksms"],
  service: "BulkSMS",
  category: "sms",
  grammar: "bulksms://token_id:token_secret@to_phone[/to_phone…][?from=…&route=standard|economy|premium]",
  docs: "https://www.bulksms.com/developer/json/v1/#tag/Message%2Fpaths%2F~1messages%2Fpost",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({
    auth: basic(u.secret(u.user, "the token id"), u.secret(u.password, "the token secret")),
    to: phones(u, [u.host, ...u.segments].filter(Boolean)),
    from: u.param("from"),
    route: u.param("route") ?? "standard",
  }),
  request: (t, m) =>
    json(
      "https://api.bulksms.com/v1/messages",
      t.to.map((to) => ({
        to,
        body: smsText(m),
        routingGroup: t.route.toUpperCase(),
        ...(t.from ? { from: t.from } : {}),
      })),
      { authorization: t.auth },
    ),
});
