/**
 * The published examples as requests: a kind's create example and each operation's
 * example, sent through HTTP exactly as written, but for their outside world
 * (`https://example.com/…`), which is the local receiver here. Shared by the examples
 * contract (every example succeeds) and the bad-input contract (every example, spoilt,
 * is refused without a charge).
 */
import { env } from "cloudflare:test";
import { expect } from "vitest";
import type { AnyKind } from "../../src/kind/kind";
import type { AnyOp, OpExample } from "../../src/kind/op";
import { fromBinaryString } from "../../src/bytes";
import { buyCredits, call, createResource, json, managed, type ResourceRecord } from "../harness";
import { requireKind } from "../../src/resources/registry";

/**
 * The example's outside world, mapped to the local receiver (a mock at the network edge only): its URLs, and the host
 * alone (an allowlist's).
 */
export const localized = <T>(value: T): T =>
  JSON.parse(
    JSON.stringify(value)
      .replaceAll("https://example.com", env.TEST_RECEIVER_URL)
      .replaceAll('"example.com"', JSON.stringify(new URL(env.TEST_RECEIVER_URL).host)),
  ) as T;

/**
 * The kind's create example as a request body: localized, and with the resources it names by
 * management token (`exampleNeeds`) made first, each from its own kind's example.
 */
export async function exampleBody(kind: AnyKind): Promise<Record<string, unknown>> {
  let text = JSON.stringify(localized(kind.example));
  for (const [placeholder, needed] of Object.entries(kind.exampleNeeds ?? {})) {
    const { mgmt } = await resourceFixture(requireKind(needed));
    text = text.replaceAll(placeholder, mgmt);
  }
  return JSON.parse(text) as Record<string, unknown>;
}

/**
 * A resource of `kind` made from its published example (the kind's contract fixture, kept in its
 * folder), with credits of its own: the one way contract tests get a resource of any kind.
 */
export async function resourceFixture(kind: AnyKind, overrides: Record<string, unknown> = {}) {
  const { token } = await buyCredits(1);
  return { ...(await createResource(kind.kind, token, { ...(await exampleBody(kind)), ...overrides })), token };
}

/** Ids the service issued in earlier answers (`lease_id`, `lock_token`, …), newest last. */
export type Issued = Map<string, string | number>;

const ISSUED = /(_id|_token)$/;

export function collectIssued(value: unknown, into: Issued): void {
  if (Array.isArray(value)) for (const item of value) collectIssued(item, into);
  else if (value && typeof value === "object") {
    for (const [key, v] of Object.entries(value)) {
      if (ISSUED.test(key) && (typeof v === "string" || typeof v === "number")) into.set(key, v);
      else collectIssued(v, into);
    }
  }
}

/** The example with the ids the service issued in place of the ones written in it. */
function withIssued(example: OpExample, issued: Issued): OpExample {
  const swap = (fields: Record<string, unknown> | undefined) =>
    fields &&
    Object.fromEntries(
      Object.entries(fields).map(([k, v]) => {
        if (ISSUED.test(k) && issued.has(k)) return [k, typeof v === "string" ? String(issued.get(k)) : issued.get(k)];
        const one = k.replace(/s$/, "");
        if (k.endsWith("_ids") && Array.isArray(v) && issued.has(one)) return [k, [issued.get(one)]];
        return [k, v];
      }),
    );
  return {
    ...example,
    params: swap(example.params) as Record<string, string> | undefined,
    input: swap(example.input) as OpExample["input"],
  };
}

export interface ExampleRequest {
  method: string;
  path: string;
  body?: unknown;
  headers: Record<string, string>;
}

/** The HTTP request an operation's example stands for, on resource `id`. */
export function exampleRequest(
  kind: AnyKind,
  op: AnyOp,
  id: string,
  example: OpExample = op.example ?? {},
): ExampleRequest {
  let path = `/v1/${kind.kind}/${id}${op.path}`.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = example.params?.[name];
    if (value === undefined) throw new Error(`${kind.kind}.${op.name}: its example names no ${name}`);
    return encodeURIComponent(value);
  });
  const headers = { ...example.headers };
  if (op.rawBody) {
    headers["content-type"] ??= "application/octet-stream";
    return { method: op.method.toUpperCase(), path, body: fromBinaryString(example.bytes ?? ""), headers };
  }
  const input = localized(example.input ?? {});
  if (op.method === "get" || op.method === "delete") {
    const query = new URLSearchParams(
      Object.entries(input).map(([k, v]): [string, string] => [k, typeof v === "string" ? v : JSON.stringify(v)]),
    );
    if ([...query].length) path += `?${query}`;
    return { method: op.method.toUpperCase(), path, headers };
  }
  return { method: op.method.toUpperCase(), path, body: input, headers };
}

export async function send(req: ExampleRequest, mgmt: string, credit: string): Promise<Response> {
  return call(req.method, req.path, { body: req.body, headers: { ...req.headers, ...managed(mgmt, credit) } });
}

const opNamed = (kind: AnyKind, name: string): AnyOp => {
  const op = kind.ops.find((o) => o.name === name);
  if (!op) throw new Error(`${kind.kind}: no operation ${name}`);
  return op;
};

/**
 * Runs the examples of what `op` needs first (its `after`), each of which must succeed, and
 * answers its own example with the ids they were issued in place.
 */
export async function prepareExample(
  kind: AnyKind,
  op: AnyOp,
  id: string,
  mgmt: string,
  credit: string,
): Promise<OpExample> {
  const issued: Issued = new Map();
  if (op.example?.arrivals) {
    const record = await json<ResourceRecord>(await call("GET", `/v1/resources/${id}`, { headers: managed(mgmt) }));
    for (let i = 0; i < op.example.arrivals; i++) {
      const res = await call("POST", new URL(record.urls.public as string).pathname, {
        body: op.example.arrivalBody ?? { example: i + 1 },
      });
      expect(res.status, `${kind.kind}: an arrival before ${op.name}`).toBeLessThan(300);
      await res.body?.cancel();
    }
  }
  for (const name of op.example?.after ?? []) {
    const before = opNamed(kind, name);
    const res = await send(exampleRequest(kind, before, id, withIssued(before.example ?? {}, issued)), mgmt, credit);
    expect(res.status, `${kind.kind}.${name} (before ${op.name}): ${await res.clone().text()}`).toBeLessThan(300);
    if (res.headers.get("content-type")?.includes("json")) collectIssued(await json(res), issued);
  }
  return withIssued(op.example ?? {}, issued);
}
