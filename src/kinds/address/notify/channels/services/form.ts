import { channel, form } from "../channel";
import { parseCustom, messageType, remap } from "../custom";
import { asText } from "../message";

export default channel({
  schemes: ["form", "forms"],
  service: "Form webhook",
  category: "webhook",
  grammar: "form[s]://[user:password@]host[:port]/path[?+Header=v&-param=v&:field=rename&method=POST]",
  docs: "https://github.com/caronc/apprise/wiki/Notify_Custom_Form",
  supports: { title: true, format: "text", attach: false, priority: true },
  parse: parseCustom,
  request(t, m) {
    const fields = remap(
      { version: "1.0", title: m.title ?? "", message: asText(m), type: messageType(m) },
      t.fields,
    ) as Record<string, string>;
    return { ...form(t.url, fields, t.headers), method: t.method };
  },
});
