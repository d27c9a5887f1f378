/**
 * What an approval keeps: the one request (what was asked, its hash, its state and, once
 * decided, the decision and its signed record) and the approvers' links. The first decision to
 * commit wins: each is recorded only while the state is still pending, in the resource's
 * transaction, so parallel clicks cannot both count.
 */
import { randomId } from "../../../auth/ids";
import { sha256Hex } from "../../../bytes";
import { sendEvent } from "../../../delivery/events";
import type { EngineStore } from "../../../kind/kind";
import { iso } from "../../../time";
import { notifyPeople } from "../notify/people";
import type { ApprovalsConfig, DecisionPayload } from "./schema";

export const TABLES = [
  `CREATE TABLE approval (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    created_at INTEGER NOT NULL,
    deadline INTEGER NOT NULL,
    request_sha256 TEXT NOT NULL,
    -- pending, approved, denied, expired
    state TEXT NOT NULL,
    jws TEXT,
    decision TEXT
  )`,
  "CREATE TABLE approvers (key TEXT PRIMARY KEY, seq INTEGER NOT NULL, name TEXT NOT NULL)",
];

export const OWNER_LINK = "owner-link";

type ApprovalRow = {
  created_at: number;
  deadline: number;
  request_sha256: string;
  state: DecisionPayload["state"];
  jws: string | null;
  decision: string | null;
};

export const approvalRow = (sql: SqlStorage) => sql.exec<ApprovalRow>("SELECT * FROM approval").one();

/** The approver a link's key names ("" is the resource's own address); null for an unknown key. */
export function approverOf(sql: SqlStorage, key: string): string | null {
  if (key === "") return OWNER_LINK;
  return sql.exec<{ name: string }>("SELECT name FROM approvers WHERE key = ?", key).toArray()[0]?.name ?? null;
}

export function links(sql: SqlStorage, publicUrl: string) {
  return [
    { approver: OWNER_LINK, url: publicUrl },
    ...sql
      .exec<{ key: string; name: string }>("SELECT key, name FROM approvers ORDER BY seq")
      .toArray()
      .map((a) => ({ approver: a.name, url: `${publicUrl}/a/${a.key}` })),
  ];
}

/** Records the request, makes each approver's link, and sends each the request through their notify resource or URL. */
export function openRequest(store: EngineStore, config: ApprovalsConfig): void {
  const deadline = store.createdAt + config.timeout_seconds * 1000;
  const hash = sha256Hex(
    JSON.stringify({
      approval_id: store.resourceId,
      title: config.title,
      description: config.description,
      options: config.options,
      created_at: iso(store.createdAt),
    }),
  );
  store.sql.exec(
    "INSERT INTO approval (id, created_at, deadline, request_sha256, state) VALUES (1, ?, ?, ?, 'pending')",
    store.createdAt,
    deadline,
    hash,
  );
  config.approvers.forEach((a, i) =>
    store.sql.exec("INSERT INTO approvers VALUES (?, ?, ?)", randomId("ak_"), i, a.name),
  );
  const byName = new Map(links(store.sql, store.publicUrl!).map((l) => [l.approver, l.url]));
  for (const a of config.approvers) {
    const link = byName.get(a.name)!;
    const about = `${config.description ? `${config.description}\n\n` : ""}Decide by ${iso(deadline)}: ${link}`;
    if (a.notify)
      notifyPeople(
        store,
        a.notify,
        {
          title: `Approval needed: ${config.title}`.slice(0, 250),
          body: about.slice(0, 16_000),
          format: "markdown",
          priority: "high",
          tags: ["approval"],
        },
        `requested:${a.name}`,
      );
    if (a.url)
      sendEvent(
        store,
        { url: a.url },
        "approvals.requested",
        {
          approver: a.name,
          title: config.title,
          description: config.description,
          options: config.options,
          link,
          decide_by: iso(deadline),
        },
        `requested:${a.name}`,
      );
  }
}

/** Records a decision (or the expiry) if the request is still pending; answers whether this one won. */
export function settle(store: EngineStore, config: ApprovalsConfig, decision: DecisionPayload, jws: string): boolean {
  const won =
    store.sql.exec(
      "UPDATE approval SET state = ?, jws = ?, decision = ? WHERE state = 'pending'",
      decision.state,
      jws,
      JSON.stringify(decision),
    ).rowsWritten > 0;
  if (won && config.callback_url)
    sendEvent(store, { url: config.callback_url }, "approvals.decided", { decision, jws }, "decided");
  return won;
}

export function view(store: EngineStore, config: ApprovalsConfig) {
  const row = approvalRow(store.sql);
  const decision = row.decision ? (JSON.parse(row.decision) as DecisionPayload) : null;
  return {
    state: row.state,
    outcome: decision?.outcome ?? null,
    title: config.title,
    request_sha256: row.request_sha256,
    decide_by: iso(row.deadline),
    decision,
    jws: row.jws,
    links: links(store.sql, store.publicUrl!),
  };
}
