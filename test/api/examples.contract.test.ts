/**
 * Every published example works as written: each kind is created from its create
 * example alone (201), and every data-plane operation's example succeeds on a
 * resource made that way (after the operations it names as needed first), answering
 * what its documented output schema describes. The
 * examples come from the registry, so a new kind is held to this the day it is added.
 */
import { describe, expect, it } from "vitest";
import { KINDS } from "../../src/resources/registry";
import { buyCredits, call, json } from "../harness";
import { exampleBody, exampleRequest, prepareExample, send } from "./examples";
import type { AnyKind } from "../../src/kind/kind";

const credit = buyCredits(50).then((b) => b.token);

async function fromExample(kind: AnyKind) {
  const res = await call("POST", `/v1/${kind.kind}`, {
    body: await exampleBody(kind),
    headers: { authorization: `Bearer ${await credit}` },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const record = await json(res);
  return { id: record.id as string, mgmt: record.management_token as string };
}

describe.each(KINDS.map((k) => [k.kind, k] as const))("%s", (kindName, kind) => {
  it("is created from its published example alone", async () => {
    await fromExample(kind);
  });

  const needsExample = kind.ops.filter(
    (op) => !op.example && (op.params || Object.keys((op.input as { shape?: object }).shape ?? {}).length > 0),
  );
  it("every operation that takes input has an example", () => {
    expect(needsExample.map((op) => op.name)).toEqual([]);
  });

  it.each(kind.ops.map((op) => [op.name, op] as const))("%s: its example succeeds", async (_name, op) => {
    const { id, mgmt } = await fromExample(kind);
    const example = await prepareExample(kind, op, id, mgmt, await credit);
    const res = await send(exampleRequest(kind, op, id, example), mgmt, await credit);
    expect(res.status, `${kindName}.${op.name}: ${await res.clone().text()}`).toBeLessThan(300);
    if (op.servesObject) return void (await res.body?.cancel());
    // The answer is what the document says it is: the op's output schema reads it.
    const parsed = op.output.safeParse(await json(res));
    expect(parsed.success, `${kindName}.${op.name}: ${parsed.error?.message}`).toBe(true);
  });
});
