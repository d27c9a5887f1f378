/**
 * The per-key operations and the batch: each checks its precondition, writes, then the vault's room, in one
 * transaction.
 */
import { AppError } from "../../../http/errors";
import type { EngineStore } from "../../../kind/kind";
import { checkPrecondition, preconditionOf } from "./preconditions";
import { checkRoom, deleteRow, infoOf, liveRow, prepareWrite, readEntry, writeRow } from "./store";
import type { BatchInput, DeleteInput, PreconditionHeaders, PutInput } from "./schema";

/** What the generic route merges into an operation's input: the path's key and the headers it reads. */
export type KeyPart = { key: string };

export function getKey(store: EngineStore, { key }: KeyPart) {
  const entry = readEntry(store, key);
  if (!entry)
    throw new AppError("not_found", `No key ${JSON.stringify(key)} in this vault (never written, deleted or expired).`);
  return entry;
}

export function putKey(store: EngineStore, input: PutInput & KeyPart & PreconditionHeaders) {
  const row = prepareWrite(store, {
    key: input.key,
    value: input.value,
    metadata: input.metadata,
    ttl_seconds: input.ttl_seconds,
  });
  checkPrecondition(preconditionOf(input), input.key, liveRow(store, input.key)?.version ?? null);
  const written = writeRow(store, row);
  checkRoom(store);
  return { ...infoOf(written), created: written.created };
}

export function deleteKey(store: EngineStore, input: DeleteInput & KeyPart & PreconditionHeaders) {
  const live = liveRow(store, input.key);
  checkPrecondition(preconditionOf(input), input.key, live?.version ?? null);
  deleteRow(store, input.key); // an expired row goes too; it was invisible already
  return { key: input.key, deleted: live !== null, version: live?.version ?? null };
}

/** Applies the operations in order; the first refusal throws, and the transaction takes back the ones before it. */
export function applyBatch(store: EngineStore, input: BatchInput) {
  const results = input.operations.map((op, i) => {
    const at = `operations.${i}`;
    const current = liveRow(store, op.key)?.version ?? null;
    if (op.op === "delete") {
      checkPrecondition(preconditionOf(op), op.key, current, `${at}: `);
      deleteRow(store, op.key);
      return { op: op.op, key: op.key, version: current, deleted: current !== null };
    }
    const row = prepareWrite(store, op, at);
    checkPrecondition(preconditionOf(op), op.key, current, `${at}: `);
    const written = writeRow(store, row);
    return { op: op.op, key: op.key, version: written.version, created: written.created };
  });
  checkRoom(store);
  const version = store.sql.exec<{ seq: number }>("SELECT seq FROM vault_state").one().seq;
  return { results, version };
}
