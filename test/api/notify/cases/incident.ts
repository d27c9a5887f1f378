/** Incident and on-call tools. */
import { MESSAGE, TEXT, type Case } from "./common";

export const INCIDENT: Case[] = [
  {
    name: "opsgenie",
    url: "opsgenie://ogKey1/@alice/#ops",
    expect: {
      path: "/api.opsgenie.com/v2/alerts",
      headers: { authorization: "GenieKey ogKey1" },
      json: {
        source: "Zeitvault",
        message: MESSAGE.title,
        description: TEXT,
        priority: "P2",
        tags: ["warning"],
        responders: [
          { type: "user", username: "alice" },
          { type: "team", name: "ops" },
        ],
      },
    },
  },
  {
    name: "pagerduty",
    url: "pagerduty://pdRouting1@pdApiKey1/db-1/disk",
    expect: {
      path: "/events.pagerduty.com/v2/enqueue",
      json: {
        routing_key: "pdRouting1",
        event_action: "trigger",
        payload: { summary: `${MESSAGE.title}: ${TEXT}`, severity: "error", source: "db-1", component: "disk" },
      },
    },
  },
  {
    name: "pagertree",
    url: "pagertree://ptInt1",
    expect: {
      path: "/api.pagertree.com/integration/ptInt1",
      json: { event_type: "create", title: MESSAGE.title, description: TEXT, tags: ["warning"], urgency: "high" },
    },
  },
  {
    name: "splunk on-call",
    url: "splunk://routeKey1@splunkApiKey1",
    expect: {
      path: "/alert.victorops.com/integrations/generic/20131114/alert/splunkApiKey1/routeKey1",
      json: {
        entity_id: "Zeitvault/routeKey1",
        message_type: "WARNING",
        entity_display_name: MESSAGE.title,
        state_message: TEXT,
        monitoring_tool: "Zeitvault",
      },
    },
  },
  {
    name: "signl4",
    url: "signl4://s4Secret1",
    expect: {
      path: "/connect.signl4.com/webhook/s4Secret1/",
      json: { title: MESSAGE.title, body: TEXT, "X-S4-SourceSystem": "Zeitvault" },
    },
  },
  {
    name: "spike.sh",
    url: "spike://spikeTok1",
    expect: { path: "/api.spike.sh/v1/alerts/spikeTok1", json: { message: MESSAGE.title, description: TEXT } },
  },
  {
    name: "incident.io",
    url: "incidentio://ioToken1@01ALERTSOURCE",
    expect: {
      path: "/api.incident.io/v2/alert_events/http/01ALERTSOURCE",
      headers: { authorization: "Bearer ioToken1" },
      json: { title: MESSAGE.title, description: TEXT, status: "firing" },
    },
  },
  {
    name: "squadcast",
    url: "squadcast://sqKey1",
    expect: {
      path: "/api.squadcast.com/v2/incidents/api/sqKey1",
      json: { message: MESSAGE.title, description: TEXT, status: "trigger" },
    },
  },
  {
    name: "zenduty",
    url: "zenduty://zdKey1",
    expect: {
      path: "/www.zenduty.com/api/events/zdKey1/",
      json: { alert_type: "error", message: MESSAGE.title, summary: TEXT },
    },
  },
];
