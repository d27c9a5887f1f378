/**
 * The registry of kinds: adding a kind is one import and one line here, then `npm run manifests`
 * (test/node/kind-manifest.test.ts says when it is due). This module imports every kind: tests and the
 * manifest's generator read it; the worker reaches kinds through kinds.ts, one at a time, from the manifest.
 */
import type { AnyKind } from "../kind/kind";
import { FAMILIES, kindsNamed as namedIn } from "./kinds";
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
import { inboxes } from "../kinds/address/inboxes";
import { bins } from "../kinds/address/bins";
import { handshakes } from "../kinds/address/handshakes";
import { deliveries } from "../kinds/address/deliveries";
import { fanout } from "../kinds/address/fanout";
import { transformers } from "../kinds/address/transformers";
import { stable } from "../kinds/address/stable";
import { proxies } from "../kinds/address/proxies";
import { frontdoor } from "../kinds/address/frontdoor";
import { notify } from "../kinds/address/notify";
import { forms } from "../kinds/address/forms";
import { approvals } from "../kinds/address/approvals";
import { oauthCallbacks } from "../kinds/address/oauth-callbacks";
import { vaults } from "../kinds/memory/vaults";
import { checkpoints } from "../kinds/memory/checkpoints";
import { journals } from "../kinds/memory/journals";
import { secrets } from "../kinds/memory/secrets";
import { blobs } from "../kinds/memory/blobs";
import { objects } from "../kinds/memory/objects";
import { idempotency } from "../kinds/memory/idempotency";
import { queues } from "../kinds/memory/queues";
import { counters } from "../kinds/memory/counters";
import { pages } from "../kinds/place/pages";
import { links } from "../kinds/place/links";
import { sites } from "../kinds/place/sites";
import { pdf } from "../kinds/place/pdf";
import { ocr } from "../kinds/utilities/ocr";
import { convertKind } from "../kinds/utilities/convert";
import { egressConnectors } from "../kinds/utilities/egress-connectors";
import { transfers } from "../kinds/utilities/transfers";
import { watches } from "../kinds/watching/watches";
import { watchGroups } from "../kinds/watching/watch-groups";
import { escalations } from "../kinds/watching/escalations";

/** In the order of docs/kinds.md: the price list, the OpenAPI document and the MCP tools list them so. */
export const KINDS: readonly AnyKind[] = [
  wakeups,
  schedules,
  deadman,
  delayed,
  drips,
  snapshots,
  spread,
  debounce,
  notary,
  attest,
  inboxes,
  bins,
  fanout,
  stable,
  deliveries,
  transformers,
  handshakes,
  proxies,
  frontdoor,
  notify,
  forms,
  approvals,
  oauthCallbacks,
  vaults,
  checkpoints,
  journals,
  secrets,
  blobs,
  objects,
  idempotency,
  queues,
  counters,
  pages,
  sites,
  links,
  pdf,
  watches,
  watchGroups,
  escalations,
  ocr,
  convertKind,
  egressConnectors,
  transfers,
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

export { FAMILIES };

/** The kinds a comma-separated list names (see kinds.ts), from this eager list. */
export const kindsNamed = (list: string, param: string): AnyKind[] => namedIn(list, param, KINDS);
