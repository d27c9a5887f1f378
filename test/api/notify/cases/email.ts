/** E-mail through providers' HTTP APIs: subject from the title, a text part and an HTML part. */
import { MESSAGE, TEXT, type Case } from "./common";

const S = MESSAGE.title;
const HTML = "<p><strong>92%</strong> used on db-1</p>";
const FROM = "alerts@example.com";
const TO = "ops@example.com";

export const EMAIL: Case[] = [
  {
    name: "sendgrid",
    url: `sendgrid://sgKey1:${FROM}/${TO}`,
    expect: {
      path: "/api.sendgrid.com/v3/mail/send",
      find: "Bearer sgKey1",
      headers: { authorization: "Bearer sgKey1" },
      json: {
        personalizations: [{ to: [{ email: TO }] }],
        from: { email: FROM },
        subject: S,
        content: [
          { type: "text/plain", value: TEXT },
          { type: "text/html", value: HTML },
        ],
      },
    },
  },
  {
    name: "mailgun",
    url: `mailgun://alerts@mg.example.com/mgKey1/${TO}?region=eu`,
    expect: {
      path: "/api.eu.mailgun.net/v3/mg.example.com/messages",
      headers: { authorization: `Basic ${btoa("api:mgKey1")}` },
      form: { from: "alerts@mg.example.com", to: TO, subject: S, text: TEXT, html: HTML },
    },
  },
  {
    name: "postmark",
    url: `postmark://pmServerTok1:${FROM}/${TO}`,
    expect: {
      path: "/api.postmarkapp.com/email",
      headers: { "x-postmark-server-token": "pmServerTok1" },
      json: { From: FROM, To: TO, Subject: S, TextBody: TEXT, HtmlBody: HTML, MessageStream: "outbound" },
    },
  },
  {
    name: "amazon ses",
    url: `ses://${FROM}/AKIASES1/sesSecret1/eu-west-1/${TO}`,
    expect: {
      path: "/email.eu-west-1.amazonaws.com/v2/email/outbound-emails",
      headers: {
        authorization: new RegExp(
          /^AWS4-HMAC-SHA256 Credential=AKIASES1\/\d{8}\/eu-west-1\/ses\/aws4_request, /.source +
            /SignedHeaders=[^,]+, Signature=[0-9a-f]{64}$/.source,
        ),
      },
      json: {
        FromEmailAddress: FROM,
        Destination: { ToAddresses: [TO] },
        Content: {
          Simple: {
            Subject: { Data: S, Charset: "UTF-8" },
            Body: { Text: { Data: TEXT, Charset: "UTF-8" }, Html: { Data: HTML, Charset: "UTF-8" } },
          },
        },
      },
    },
  },
  {
    name: "resend",
    url: `resend://re_key1:${FROM}/${TO}?name=Zeitvault`,
    expect: {
      path: "/api.resend.com/emails",
      headers: { authorization: "Bearer re_key1" },
      json: { from: `Zeitvault <${FROM}>`, to: [TO], subject: S, text: TEXT, html: HTML },
    },
  },
  {
    name: "sparkpost",
    url: `sparkpost://${FROM}/spKey1/${TO}`,
    expect: {
      path: "/api.sparkpost.com/api/v1/transmissions",
      headers: { authorization: "spKey1" },
      json: {
        recipients: [{ address: { email: TO } }],
        content: { from: { email: FROM }, subject: S, text: TEXT, html: HTML },
      },
    },
  },
  {
    name: "brevo",
    url: `brevo://xkeysib-1:${FROM}/${TO}`,
    expect: {
      path: "/api.brevo.com/v3/smtp/email",
      headers: { "api-key": "xkeysib-1" },
      json: { sender: { email: FROM }, to: [{ email: TO }], subject: S, textContent: TEXT, htmlContent: HTML },
    },
  },
  {
    name: "mailjet",
    url: `mailjet://mjKey1:mjSecret1@example.com/alerts/${TO}`,
    expect: {
      path: "/api.mailjet.com/v3.1/send",
      headers: { authorization: `Basic ${btoa("mjKey1:mjSecret1")}` },
      json: { Messages: [{ From: { Email: FROM }, To: [{ Email: TO }], Subject: S, TextPart: TEXT, HTMLPart: HTML }] },
    },
  },
  {
    name: "smtp2go",
    url: `smtp2go://${FROM}/s2gKey1/${TO}`,
    expect: {
      path: "/api.smtp2go.com/v3/email/send",
      headers: { "x-smtp2go-api-key": "s2gKey1" },
      json: { sender: FROM, to: [TO], subject: S, text_body: TEXT, html_body: HTML },
    },
  },
  {
    name: "mailersend",
    url: `mailersend://msToken1:${FROM}/${TO}`,
    expect: {
      path: "/api.mailersend.com/v1/email",
      headers: { authorization: "Bearer msToken1" },
      json: { from: { email: FROM }, to: [{ email: TO }], subject: S, text: TEXT, html: HTML },
    },
  },
  {
    name: "mailtrap",
    url: `mailtrap://mtToken1:${FROM}/${TO}`,
    expect: {
      path: "/send.api.mailtrap.io/api/send",
      headers: { authorization: "Bearer mtToken1" },
      json: { from: { email: FROM }, to: [{ email: TO }], subject: S, text: TEXT, html: HTML },
    },
  },
  {
    name: "zeptomail",
    url: `zeptomail://zmToken1:${FROM}/${TO}`,
    expect: {
      path: "/api.zeptomail.com/v1.1/email",
      headers: { authorization: "Zoho-enczapikey zmToken1" },
      json: {
        from: { address: FROM },
        to: [{ email_address: { address: TO } }],
        subject: S,
        textbody: TEXT,
        htmlbody: HTML,
      },
    },
  },
  {
    name: "elastic email",
    url: `elasticemail://eeKey1:${FROM}/${TO}`,
    expect: {
      path: "/api.elasticemail.com/v4/emails/transactional",
      headers: { "x-elasticemail-apikey": "eeKey1" },
      json: {
        Recipients: { To: [TO] },
        Content: {
          From: FROM,
          Subject: S,
          Body: [
            { ContentType: "PlainText", Content: TEXT },
            { ContentType: "HTML", Content: HTML },
          ],
        },
      },
    },
  },
  {
    name: "mailchannels",
    url: `mailchannels://mcKey1:${FROM}/${TO}`,
    expect: {
      path: "/api.mailchannels.net/tx/v1/send",
      headers: { "x-api-key": "mcKey1" },
      json: {
        personalizations: [{ to: [{ email: TO }] }],
        from: { email: FROM },
        subject: S,
        content: [
          { type: "text/plain", value: TEXT },
          { type: "text/html", value: HTML },
        ],
      },
    },
  },
];
