/**
 * The clock move's documented answer (docs/api.md#sandboxes): a schedule's tick, a dead-man going late, an escalation's
 * second page.
 */
export const CLOCK_EXAMPLE = {
  from: "2027-03-13T12:00:00.000Z",
  to: "2027-03-16T12:00:00.000Z",
  reached: "2027-03-16T12:00:00.000Z",
  more: false,
  fired: [
    {
      at: "2027-03-14T13:00:00.000Z",
      resource_id: "r_5Yk2…",
      kind: "schedules",
      type: "delivery",
      detail: {
        delivery_id: "dlv_…",
        event_type: "schedule.tick",
        method: "POST",
        url: "https://example.com/hooks/daily",
      },
    },
    {
      at: "2027-03-13T13:10:00.000Z",
      resource_id: "r_8Qm1…",
      kind: "deadman",
      type: "delivery",
      detail: {
        delivery_id: "dlv_…",
        event_type: "deadman.late",
        method: "POST",
        url: "https://example.com/hooks/alerts",
      },
    },
    {
      at: "2027-03-13T12:15:00.000Z",
      resource_id: "r_2Lp7…",
      kind: "escalations",
      type: "delivery",
      detail: {
        delivery_id: "dlv_…",
        event_type: "escalation.paged",
        method: "POST",
        url: "https://example.com/hooks/level-2",
      },
    },
  ],
};

/** The delivery log's documented answer: a schedule's tick, kept instead of sent. */
export const DELIVERY_LOG_EXAMPLE = {
  items: [
    {
      seq: 1,
      at: "2027-03-14T08:00:00.000Z",
      resource_id: "r_5Yk2…",
      delivery_id: "msg_2xQ…",
      event_type: "schedule.fired",
      method: "POST",
      url: "https://example.com/hooks/daily",
      headers: {
        "user-agent": "zeitvault-webhooks/1.0",
        "content-type": "application/json",
        authorization: "[masked]",
        "webhook-id": "msg_2xQ…",
        "webhook-timestamp": "1773475200",
        "webhook-signature": "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
      },
      body: '{"report":"daily"}',
      body_bytes: 18,
      body_sha256: "0d2c4bd43b2e4f0c7b1c3a8f7f0e6a9d1b5c2e8f4a6d3b9c7e1f0a2b4c6d8e0f",
      body_withheld: false,
    },
  ],
  next_cursor: null,
};
