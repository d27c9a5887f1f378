import { channel, json } from "../channel";
import { titled } from "../message";

export default channel({
  schemes: ["feishu"],
  service: "Feishu",
  category: "chat",
  grammar: "feishu://webhook_token",
  docs: "https://open.feishu.cn/document/client-docs/bot-v3/add-custom-bot",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({ token: u.secret(u.host, "the webhook token") }),
  request: (t, m) => ({
    ...json(`https://open.feishu.cn/open-apis/bot/v2/hook/${t.token}/`, {
      msg_type: "text",
      content: { text: titled(m) },
    }),
    okWhen: { field: "code", equals: 0 },
  }),
});
