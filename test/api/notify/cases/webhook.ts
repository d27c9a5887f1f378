/** Apprise's own webhook formats, Apprise API and IFTTT. */
import { H, MESSAGE, P, TEXT, type Case } from "./common";

export const WEBHOOK: Case[] = [
  {
    name: "json",
    url: `json://${H}/${P}/json-hook?+X-Api-Key=jsonsecret1&-source=zv&:type=level`,
    expect: {
      path: "/self/json-hook?source=zv",
      headers: { "x-api-key": "jsonsecret1", "content-type": "application/json" },
      json: { version: "1.0", title: MESSAGE.title, message: TEXT, attachments: [], level: "warning" },
    },
  },
  {
    name: "form",
    url: `form://user1:pw1@${H}/${P}/form-hook`,
    expect: {
      path: "/self/form-hook",
      headers: { authorization: `Basic ${btoa("user1:pw1")}`, "content-type": "application/x-www-form-urlencoded" },
      form: { version: "1.0", title: MESSAGE.title, message: TEXT, type: "warning" },
    },
  },
  {
    name: "xml",
    url: `xml://${H}/${P}/xml-hook`,
    expect: {
      path: "/self/xml-hook",
      headers: { "content-type": "application/xml" },
      text: new RegExp(
        /<Notification xmlns:xsi="[^"]+NotifyXML-1\.1\.xsd"><Version>1\.1<\/Version>/.source +
          /<Subject>Disk almost full<\/Subject><MessageType>warning<\/MessageType>/.source +
          /<Message>92% used on db-1<\/Message><\/Notification>/.source,
      ),
    },
  },
  {
    name: "apprise api",
    url: "apprises://admin:apprisepw@apprise.example/apprisecfgkey?tags=ops",
    expect: {
      path: "/apprise.example/notify/apprisecfgkey",
      headers: { authorization: `Basic ${btoa("admin:apprisepw")}` },
      json: { title: MESSAGE.title, body: MESSAGE.body, type: "warning", format: "markdown", tag: "ops" },
    },
  },
  {
    name: "ifttt",
    url: "ifttt://iftttKey123@disk_alert/backup_alert",
    expect: [
      {
        path: "/maker.ifttt.com/trigger/disk_alert/with/key/iftttKey123",
        json: { value1: MESSAGE.title, value2: TEXT, value3: "warning" },
      },
      { path: "/maker.ifttt.com/trigger/backup_alert/with/key/iftttKey123", json: { value1: MESSAGE.title } },
    ],
  },
];
