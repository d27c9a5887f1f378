import { channel, json } from "../channel";
import { bare, phones, smsText } from "../sms";

/** Infobip's SMS API on the account's own base URL (`{account}.api.infobip.com`). */
export default channel({
  schemes: ["infobip"],
  service: "Infobip SMS",
  category: "sms",
  grammar: "infobip://api_key@base_host/to_phone[/to_phone…][?from=…]",
  docs: "https://www.infobip.com/docs/api/channels/sms/sms-messaging/outbound-sms/send-sms-messages",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({
    key: u.secret(u.user, "the API key"),
    origin: u.origin(true),
    to: phones(u, u.segments).map(bare),
    from: u.param("from"),
  }),
  request: (t, m) =>
    json(
      `${t.origin}/sms/3/messages`,
      {
        messages: [
          {
            destinations: t.to.map((to) => ({ to })),
            ...(t.from ? { sender: t.from } : {}),
            content: { text: smsText(m) },
          },
        ],
      },
      { authorization: `App ${t.key}`, accept: "application/json" },
    ),
});
