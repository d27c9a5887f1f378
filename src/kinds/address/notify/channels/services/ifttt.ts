import { channel, json } from "../channel";
import { asText } from "../message";
import { messageType } from "../custom";

/** Maker webhooks: value1 title, value2 body, value3 the message type, per event. */
export default channel({
  schemes: ["ifttt"],
  service: "IFTTT",
  category: "webhook",
  grammar: "ifttt://webhook_key@event[/event…]",
  docs: "https://ifttt.com/maker_webhooks",
  supports: { title: true, format: "text", attach: false, priority: true },
  parse: (u) => ({ key: u.secret(u.user, "the webhook key"), events: [u.need(u.host, "an event"), ...u.segments] }),
  request: (t, m) =>
    t.events.map((event) =>
      json(`https://maker.ifttt.com/trigger/${encodeURIComponent(event)}/with/key/${t.key}`, {
        value1: m.title ?? "",
        value2: asText(m),
        value3: messageType(m),
      }),
    ),
});
