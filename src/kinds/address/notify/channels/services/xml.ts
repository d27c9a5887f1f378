import { channel } from "../channel";
import { parseCustom, messageType, remap } from "../custom";
import { asText, escapeHtmlText } from "../message";

const XSD = "https://raw.githubusercontent.com/caronc/apprise/master/apprise/assets/NotifyXML-1.1.xsd";

export default channel({
  schemes: ["xml", "xmls"],
  service: "XML (SOAP) webhook",
  category: "webhook",
  grammar: "xml[s]://[user:password@]host[:port]/path[?+Header=v&-param=v&:Field=rename&method=POST]",
  docs: "https://github.com/caronc/apprise/wiki/Notify_Custom_XML",
  supports: { title: true, format: "text", attach: false, priority: true },
  parse: parseCustom,
  request(t, m) {
    const fields = remap(
      { Version: "1.1", Subject: m.title ?? "", MessageType: messageType(m), Message: asText(m) },
      t.fields,
    );
    const core = Object.entries(fields)
      .map(([k, v]) => `<${k}>${escapeHtmlText(String(v))}</${k}>`)
      .join("");
    // The schema is named only while the payload has its standard fields (as Apprise does).
    const xsd = Object.keys(t.fields).length ? "" : ` xmlns:xsi="${XSD}"`;
    const body = `<?xml version='1.0' encoding='utf-8'?>
<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"
  xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<soapenv:Body><Notification${xsd}>${core}</Notification></soapenv:Body>
</soapenv:Envelope>`;
    return { method: t.method, url: t.url, headers: { "content-type": "application/xml", ...t.headers }, body };
  },
});
