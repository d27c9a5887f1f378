import { channel, form } from "../channel";
import { phones, smsText } from "../sms";

export default channel({
  schemes: ["atalk"],
  service: "Africa's Talking SMS",
  category: "sms",
  grammar: "atalk://app_user@api_key/to_phone[/to_phone…][?from=…&mode=bulksms|premium|sandbox]",
  docs: "https://developers.africastalking.com/docs/sms/sending/bulk",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({
    user: u.need(u.user, "the app user name"),
    key: u.secret(u.host, "the API key"),
    to: phones(u, u.segments),
    from: u.param("from"),
    mode: u.param("mode") ?? "bulksms",
  }),
  request: (t, m) =>
    form(
      t.mode === "premium"
        ? "https://content.africastalking.com/version1/messaging"
        : t.mode === "sandbox"
          ? "https://api.sandbox.africastalking.com/version1/messaging"
          : "https://api.africastalking.com/version1/messaging",
      { username: t.user, to: t.to.join(","), message: smsText(m), from: t.from },
      { apikey: t.key, accept: "application/json" },
    ),
});
