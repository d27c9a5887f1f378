import { bearer, channel, json } from "../channel";
import { clip, titled } from "../message";

/** The WhatsApp Cloud API: a text message to each number (inside a customer-service window, as Meta requires). */
export default channel({
  schemes: ["whatsapp"],
  service: "WhatsApp (Cloud API)",
  category: "chat",
  grammar: "whatsapp://access_token@from_phone_id/to_phone[/to_phone…]",
  docs: "https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({
    token: u.secret(u.user, "the access token"),
    from: u.need(u.host, "the sending phone number id"),
    to: u.segments.length ? u.segments.map((p) => p.replace(/[^\d]/g, "")) : [u.need(null, "a recipient")],
  }),
  request: (t, m) =>
    t.to.map((to) =>
      json(
        `https://graph.facebook.com/v21.0/${encodeURIComponent(t.from)}/messages`,
        {
          messaging_product: "whatsapp",
          recipient_type: "individual",
          to,
          type: "text",
          text: { body: clip(titled(m), 4096) },
        },
        { authorization: bearer(t.token) },
      ),
    ),
});
