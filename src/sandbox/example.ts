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
