/** An incident's steps: each sent when due, to all its targets, then the next step, round after round. */
import type { EngineStore } from "../../../kind/kind";
import { iso } from "../../../time";
import { sendEvent } from "../../../delivery/events";
import { notifyPeople } from "../../address/notify/people";
import { ackUrl, log, type IncidentRow } from "./incidents";
import type { EscalationConfig, Target } from "./schema";

function sendStep(store: EngineStore, config: EscalationConfig, row: IncidentRow): void {
  const step = config.steps[row.step]!;
  const data = {
    incident_id: row.id,
    title: row.title,
    details: row.details,
    source: row.source,
    opened_at: iso(row.opened_at),
    step: row.step + 1,
    steps: config.steps.length,
    round: row.round + 1,
    ack_url: ackUrl(store, row),
  };
  const unique = `${row.id}:${row.round}:${row.step}`;
  const shown: string[] = [];
  (step.targets as Target[]).forEach((t, i) => {
    if ("url" in t) {
      sendEvent(store, { url: t.url }, "escalation.step", data, `step:${unique}:${i}`);
      shown.push(t.url);
    } else {
      notifyPeople(
        store,
        t.notify,
        {
          title: `${row.title} (escalation step ${row.step + 1})`,
          body: `${row.details ? `${row.details}\n\n` : ""}Acknowledge: ${data.ack_url}`,
          format: "text",
          priority: "high",
          tags: ["escalation"],
        },
        `step:${unique}:${i}`,
      );
      shown.push(t.notify);
    }
  });
  log(store, row.id, "step", { step: row.step + 1, round: row.round + 1, targets: shown });
}

/** Where an incident goes after a step: the next step, the next round, or nowhere (exhausted). */
function advance(store: EngineStore, config: EscalationConfig, row: IncidentRow): void {
  const last = row.step + 1 >= config.steps.length;
  if (last && row.round >= config.repeat) {
    store.sql.exec("UPDATE incidents SET next_at = NULL, steps_sent = steps_sent + 1 WHERE id = ?", row.id);
    log(store, row.id, "exhausted");
    return;
  }
  const [step, round] = last ? [0, row.round + 1] : [row.step + 1, row.round];
  store.sql.exec(
    "UPDATE incidents SET step = ?, round = ?, next_at = ?, steps_sent = steps_sent + 1 WHERE id = ?",
    step,
    round,
    store.now + config.steps[step]!.delay_seconds * 1000,
    row.id,
  );
}

/** The timer: every open incident whose step is due sends it. */
export function fireDue(store: EngineStore, config: EscalationConfig): void {
  const due = store.sql
    .exec<IncidentRow>(
      "SELECT * FROM incidents WHERE state = 'open' AND next_at IS NOT NULL AND next_at <= ? ORDER BY " +
        "next_at LIMIT 100",
      store.now,
    )
    .toArray();
  for (const row of due) {
    sendStep(store, config, row);
    advance(store, config, row);
  }
}

export const nextDue = (sql: SqlStorage): number | null =>
  sql.exec<{ at: number | null }>("SELECT min(next_at) AS at FROM incidents WHERE state = 'open'").one().at;
