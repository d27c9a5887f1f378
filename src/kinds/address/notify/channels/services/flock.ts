import { channel, json } from "../channel";
import { asHtml, escapeHtmlText } from "../message";

export default channel({
  schemes: ["flock"],
  service: "Flock",
  category: "chat",
  grammar: "flock://[botname@]webhook_token",
  docs: "https://docs.flock.com/display/flockos/Incoming+Webhooks",
  supports: { title: true, format: "html", attach: false, priority: false },
  parse: (u) => ({ token: u.secret(u.host, "the webhook token"), botname: u.user }),
  request: (t, m) =>
    json(`https://api.flock.com/hooks/sendMessage/${t.token}`, {
      flockml: `<flockml>${m.title ? `<b>${escapeHtmlText(m.title)}</b><br/>` : ""}${asHtml(m)}</flockml>`,
      ...(t.botname ? { sendAs: { name: t.botname } } : {}),
    }),
});
