import { bearer, channel, json } from "../channel";
import { clip, titled } from "../message";

/** A status; `@user` segments make it a direct message to them. */
export default channel({
  schemes: ["mastodon", "mastodons", "toot", "toots"],
  service: "Mastodon",
  category: "chat",
  grammar: "mastodon[s]://access_token@host[:port][/@user…][?visibility=direct|private|unlisted|public]",
  docs: "https://docs.joinmastodon.org/methods/statuses/#create",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({
    origin: u.origin(),
    token: u.secret(u.user, "the access token"),
    users: u.segments.map((s) => (s.startsWith("@") ? s : `@${s}`)),
    visibility: u.param("visibility"),
  }),
  request(t, m) {
    const mention = t.users.length ? `${t.users.join(" ")} ` : "";
    return json(
      `${t.origin}/api/v1/statuses`,
      {
        status: clip(`${mention}${titled(m)}`, 500),
        visibility: t.visibility ?? (t.users.length ? "direct" : "public"),
      },
      { authorization: bearer(t.token), "idempotency-key": m.id },
    );
  },
});
