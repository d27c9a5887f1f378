import { channel, form, withQuery } from "../channel";
import { titled } from "../message";

export default channel({
  schemes: ["synology", "synologys"],
  service: "Synology Chat",
  category: "chat",
  grammar: "synology[s]://host[:port]/webhook_token",
  docs: "https://kb.synology.com/en-global/DSM/help/Chat/chat_integration",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({ origin: u.origin(), token: u.secret(u.segments[0], "the webhook token") }),
  request: (t, m) =>
    form(
      withQuery(`${t.origin}/webapi/entry.cgi`, {
        api: "SYNO.Chat.External",
        method: "incoming",
        version: 2,
        token: t.token,
      }),
      { payload: JSON.stringify({ text: titled(m) }) },
    ),
});
