import { channel, withQuery } from "../channel";
import { bare, phone, phones, smsText } from "../sms";

export default channel({
  schemes: ["clickatell"],
  service: "Clickatell SMS",
  category: "sms",
  grammar: "clickatell://[from_phone@]api_key/to_phone[/to_phone…]",
  docs: "https://docs.clickatell.com/channels/sms-channels/sms-api-reference/#tag/SMS-API/operation/sendMessageREST_1",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({
    key: u.secret(u.host, "the API key"),
    from: u.user ? bare(phone(u.user)) : null,
    to: phones(u, u.segments).map(bare),
  }),
  request: (t, m) =>
    t.to.map((to) => ({
      method: "GET" as const,
      headers: { accept: "application/json" },
      body: null,
      url: withQuery("https://platform.clickatell.com/messages/http/send", {
        apiKey: t.key,
        to,
        content: smsText(m),
        from: t.from,
      }),
    })),
});
