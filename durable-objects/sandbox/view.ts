/** How a sandbox answers: its view (the Sandbox schema), and the 410 an ended one gives. */
import { AppError } from "../../src/http/errors";
import type { SandboxView } from "../../src/rpc/sandbox";
import type { SandboxRow, SandboxStore } from "./store";

export function sandboxView(row: SandboxRow, store: SandboxStore): SandboxView {
  return {
    id: row.sandbox_id,
    label: row.label,
    deliveries: row.deliveries,
    state: row.ended_at === null ? "active" : "ended",
    created_at: row.created_at,
    expires_at: row.expires_at,
    now: Date.now() + row.offset_ms,
    offset_ms: row.offset_ms,
    resources: store.members().map((m) => ({ id: m.resource_id, kind: m.kind })),
    events: store.eventCount(),
  };
}

export function ended(row: SandboxRow): AppError {
  return new AppError(
    "resource_expired",
    `Sandbox ${row.sandbox_id} has ended: its resources and its credit are gone.`,
  );
}
