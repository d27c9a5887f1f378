import { basic, channel, json } from "../channel";
import { titled } from "../message";

export default channel({
  schemes: ["nctalk", "nctalks"],
  service: "Nextcloud Talk",
  category: "chat",
  grammar: "nctalk[s]://user:password@host[:port]/room_token[/room_token…]",
  docs: "https://nextcloud-talk.readthedocs.io/en/latest/chat/#sending-a-new-chat-message",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({
    origin: u.origin(),
    auth: basic(u.secret(u.user, "a user"), u.secret(u.password, "a password")),
    rooms: u.segments.length ? u.segments : [u.need(null, "a room token")],
  }),
  request: (t, m) =>
    t.rooms.map((room) =>
      json(
        `${t.origin}/ocs/v2.php/apps/spreed/api/v1/chat/${encodeURIComponent(room)}`,
        { message: titled(m) },
        { authorization: t.auth, "ocs-apirequest": "true", accept: "application/json" },
      ),
    ),
});
