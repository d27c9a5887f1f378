import { channel, json } from "../channel";
import { titled } from "../message";

export default channel({
  schemes: ["lark"],
  service: "Lark",
  category: "chat",
  grammar: "lark://webhook_token",
  docs: "https://open.larksuite.com/document/client-docs/bot-v3/add-custom-bot",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({ token: u.secret(u.host, "the webhook token") }),
  request: (t, m) => ({
    ...json(`https://open.larksuite.com/open-apis/bot/v2/hook/${t.token}`, {
      msg_type: "text",
      content: { text: titled(m) },
    }),
    okWhen: { field: "code", equals: 0 },
  }),
});
