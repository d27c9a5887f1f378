import { channel, json } from "../channel";
import { smsText } from "../sms";

/** Free Mobile's own-number notification SMS (France). */
export default channel({
  schemes: ["freemobile"],
  service: "Free Mobile",
  category: "sms",
  grammar: "freemobile://user@api_key",
  docs: "https://mobile.free.fr/account/mes-options/notifications-sms",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({ user: u.need(u.user, "the user"), pass: u.secret(u.host, "the API key") }),
  request: (t, m) =>
    json("https://smsapi.free-mobile.fr/sendmsg", { user: t.user, pass: t.pass, msg: smsText(m, 999) }),
});
