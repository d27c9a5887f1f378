/**
 * The parts a ResourceObject delegates to, each with its own state, made once per object and wired to one another
 * (ResourceObject.ts lists what each does).
 */
import type { Env } from "../../src/env";
import type { ResourceFaults } from "../../src/rpc/resource-faults";
import { MetaCell } from "./meta-cell";
import { ResourceClock } from "./clock";
import { ResourceOutbox } from "./outbox";
import { Billing } from "./billing";
import { ResourceWork } from "./work";
import { ResourceLifecycle } from "./lifecycle";
import { ResourceOperations } from "./operations";
import { PublicAddress } from "./public-address";
import { BetweenResources } from "./between-resources";
import { ResourceAlarm } from "./alarm";
import { ResourceInSandbox } from "./in-sandbox";

export type ResourceParts = {
  meta: MetaCell;
  /** The resource's clock (ahead of the real one only in tests and sandboxes). */
  clock: ResourceClock;
  /** Deliveries and R2 deletes that committed work obliges. */
  outbox: ResourceOutbox;
  work: ResourceWork;
  lifecycle: ResourceLifecycle;
  operations: ResourceOperations;
  publicAddress: PublicAddress;
  betweenResources: BetweenResources;
  /** Its side of a sandbox, when it is in one (in-sandbox.ts). */
  sandbox: ResourceInSandbox;
  alarms: ResourceAlarm;
  /** Made on first use: it needs the resource's id. */
  billing: () => Billing;
};

/** `runAlarm`: the object's alarm handler, which a sandbox's step runs. */
export function resourceParts(
  ctx: DurableObjectState,
  env: Env,
  faults: ResourceFaults,
  runAlarm: () => Promise<void>,
): ResourceParts {
  // The alarm knows every part's due times; the parts made before it reach it through this closure.
  const armAlarm = (): Promise<void> => alarms.arm();
  let billingOf: Billing | undefined;
  const billing = (): Billing =>
    (billingOf ??= new Billing(
      ctx.storage.sql,
      env,
      meta.get()!.id,
      (captured) => {
        if (captured) meta.update({ charged: meta.get()!.charged + captured });
      },
      () => clock.now(),
      () => clock.sandboxId,
    ));
  const storage = ctx.storage;
  const meta = new MetaCell(storage.sql, () => clock.now());
  const clock = new ResourceClock(storage);
  const outbox = new ResourceOutbox(storage, env, clock, () => meta.get()!.id, faults);
  const work = new ResourceWork(storage, env, meta, clock, outbox, billing, faults, armAlarm);
  const lifecycle = new ResourceLifecycle(
    ctx,
    env,
    meta,
    clock,
    outbox,
    work,
    billing,
    () => (billingOf = undefined),
    faults,
    armAlarm,
  );
  const operations = new ResourceOperations(storage, meta, clock, work, billing, armAlarm, faults);
  const publicAddress = new PublicAddress(meta, clock, work, outbox.intents, faults);
  const betweenResources = new BetweenResources(meta, clock, work);
  const sandbox = new ResourceInSandbox(storage, env, meta, clock, work, lifecycle, runAlarm, armAlarm);
  const alarms = new ResourceAlarm(storage, env, meta, clock, outbox, work, lifecycle, billing, sandbox);
  return {
    meta,
    clock,
    outbox,
    work,
    lifecycle,
    operations,
    publicAddress,
    betweenResources,
    sandbox,
    alarms,
    billing,
  };
}
