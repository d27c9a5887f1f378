import { basic, channel, json } from "../channel";
import { titled } from "../message";

/** A signal-cli-rest-api server (bbernhard/signal-cli-rest-api) sending from a registered number. */
export default channel({
  schemes: ["signal", "signals"],
  service: "Signal (signal-cli REST API)",
  category: "chat",
  grammar: "signal[s]://[user:password@]host[:port]/from_phone/to_phone|group.id[/…]",
  docs: "https://bbernhard.github.io/signal-cli-rest-api/#/Messages/post_v2_send",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({
    origin: u.origin(),
    auth: u.user ? basic(u.secret(u.user, "a user"), u.password ? u.secret(u.password, "a password") : "") : null,
    from: u.need(u.segments[0], "the phone number sending"),
    to: u.segments.length > 1 ? u.segments.slice(1) : [u.need(null, "a recipient")],
  }),
  request: (t, m) =>
    json(
      `${t.origin}/v2/send`,
      { message: titled(m), number: t.from, recipients: t.to },
      t.auth ? { authorization: t.auth } : {},
    ),
});
