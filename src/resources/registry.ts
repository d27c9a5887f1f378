/** The registry of kinds: adding a kind is one import and one line here. */
import type { AnyKind } from "./kind";
import { wakeups } from "../kinds/time/wakeups";
import { schedules } from "../kinds/time/schedules";
import { deadman } from "../kinds/time/deadman";
import { delayed } from "../kinds/time/delayed";
import { drips } from "../kinds/time/drips";
import { snapshots } from "../kinds/time/snapshots";
import { spread } from "../kinds/time/spread";
import { debounce } from "../kinds/time/debounce";
import { notary } from "../kinds/time/notary";
import { attest } from "../kinds/time/attest";
import { vaults } from "../kinds/memory/vaults";
import { checkpoints } from "../kinds/memory/checkpoints";
import { journals } from "../kinds/memory/journals";
import { secrets } from "../kinds/memory/secrets";
import { blobs } from "../kinds/memory/blobs";
import { objects } from "../kinds/memory/objects";
import { idempotency } from "../kinds/memory/idempotency";
import { queues } from "../kinds/memory/queues";
import { counters } from "../kinds/memory/counters";

/** In the order of KINDS.md: the price list, the OpenAPI document and the MCP tools list them so. */
export const KINDS: readonly AnyKind[] = [
  wakeups, schedules, deadman, delayed, drips, snapshots, spread, debounce, notary, attest,
  vaults, checkpoints, journals, secrets, blobs, objects, idempotency, queues, counters,
];

const byName = new Map(KINDS.map((k) => [k.kind, k]));

export function findKind(name: string): AnyKind | undefined {
  return byName.get(name);
}

/** For names that came from our own storage: an unknown one is a bug, not a client error. */
export function requireKind(name: string): AnyKind {
  const kind = byName.get(name);
  if (!kind) throw new Error(`unknown kind ${name}`);
  return kind;
}
