import { channel, form } from "../channel";
import { clip, titled } from "../message";

/** Threema Gateway's basic mode, one call per recipient (a phone number, an e-mail or a Threema ID). */
export default channel({
  schemes: ["threema"],
  service: "Threema Gateway",
  category: "chat",
  grammar: "threema://gateway_id@secret/recipient[/recipient…]",
  docs: "https://gateway.threema.ch/en/developer/api",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({
    from: u.need(u.user, "the gateway id (*XXXXXXX)"),
    secret: u.secret(u.host, "the API secret"),
    to: u.segments.length ? u.segments : [u.need(null, "a recipient")],
  }),
  request: (t, m) =>
    t.to.map((r) => {
      const kind = r.includes("@") ? "email" : /^\+?\d{6,}$/.test(r) ? "phone" : "to";
      return form("https://msgapi.threema.ch/send_simple", {
        from: t.from,
        [kind]: kind === "phone" ? r.replace(/^\+/, "") : r,
        secret: t.secret,
        text: clip(titled(m), 3500),
      });
    }),
});
