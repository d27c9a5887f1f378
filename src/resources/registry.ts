/** The registry of kinds: adding a kind is one import and one line here. */
import type { AnyKind } from "./kind";
import { counters } from "../kinds/memory/counters";
import { wakeups } from "../kinds/time/wakeups";
import { schedules } from "../kinds/time/schedules";
import { delayed } from "../kinds/time/delayed";
import { spread } from "../kinds/time/spread";
import { drips } from "../kinds/time/drips";
import { notary } from "../kinds/time/notary";
import { attest } from "../kinds/time/attest";
import { snapshots } from "../kinds/time/snapshots";
import { deadman } from "../kinds/time/deadman";
import { debounce } from "../kinds/time/debounce";
import { blobs } from "../kinds/memory/blobs";
import { journals } from "../kinds/memory/journals";
import { queues } from "../kinds/memory/queues";
import { vaults } from "../kinds/memory/vaults";
import { secrets } from "../kinds/memory/secrets";
import { idempotency } from "../kinds/memory/idempotency";
import { checkpoints } from "../kinds/memory/checkpoints";

export const KINDS: readonly AnyKind[] = [wakeups, schedules, delayed, spread, drips, notary, attest, snapshots, deadman, debounce, blobs, journals, queues, vaults, secrets, idempotency, checkpoints, counters];

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
