/**
 * Worker scripts as wrangler 4.86 uses them for setup and deploy: the service record that says a Worker
 * exists, its secrets (list, put, and the settings PATCH of `secret bulk`; both make a draft Worker
 * when there is none), and the deploy, secrets possibly with it: the assets upload session, the script
 * upload (a new Worker's, or a version and its deployment), its settings and schedules, the workers.dev
 * subdomain, and the queue consumers it attaches.
 */
import {
  hexId,
  newId,
  now,
  route,
  jsonBody,
  summarizeJson,
  type Account,
  type Route,
  type RouteContext,
  type Script,
} from "./state";

const NOT_FOUND = { code: 10007, message: "This Worker does not exist on your account." };

function scriptOr404(account: Account, name: string) {
  return account.scripts.get(name);
}

function newScript(account: Account, name: string): Script {
  const script: Script = {
    name,
    tag: hexId(),
    created_on: now(),
    modified_on: now(),
    secrets: new Map(),
    bindings: [],
    migrationTag: null,
    versions: [],
    deployed: null,
    crons: [],
    workersDev: false,
    previews: false,
    draft: true,
  };
  account.scripts.set(name, script);
  return script;
}

/** A multipart form (script uploads, settings) read with undici's parser, as the real API reads it. */
async function formOf(ctx: { body: Buffer; contentType: string }) {
  return new Response(ctx.body, { headers: { "content-type": ctx.contentType } }).formData();
}

type Binding = { type: string; name: string; text?: string };

/** The bindings with every secret's text left out: what a recorded request may show. */
const bindingSummary = (bindings: Binding[]) => bindings.map((b) => `${b.type}:${b.name}`).join(", ");

/**
 * Applies bindings as the API does: a secret_text with a value sets it; the other secrets stay (a
 * Worker's secrets outlive its uploads); the rest of the bindings are replaced.
 */
function applyBindings(script: Script, bindings: Binding[]) {
  for (const b of bindings) if (b.type === "secret_text" && b.text !== undefined) script.secrets.set(b.name, b.text);
  script.bindings = bindings
    .filter((b) => b.type !== "secret_text" && b.type !== "inherit")
    .map((b) => (b.type === "plain_text" ? b : { type: b.type, name: b.name }));
  script.modified_on = now();
}

/** A JWT-shaped token (wrangler reads its `exp` when an upload is slow). */
const jwt = (kind: string) =>
  [{ alg: "none" }, { kind, exp: Math.floor(Date.now() / 1000) + 3600 }]
    .map((part) => Buffer.from(JSON.stringify(part)).toString("base64url"))
    .join(".") + ".stand-in";

/** A script upload (multipart: metadata and modules): the script's new bindings, secrets and migration tag. */
async function upload(ctx: RouteContext) {
  const form = await formOf(ctx);
  const metadata = jsonBody<{ bindings?: Binding[]; compatibility_date?: string; migrations?: { new_tag?: string } }>(
    Buffer.from(String(form.get("metadata") ?? "{}")),
  );
  const bindings = metadata.bindings ?? [];
  const vars = bindings.filter((b) => b.type === "plain_text").length;
  const modules = [...form.keys()].filter((k) => k !== "metadata");
  ctx.entry.summary =
    `upload ${modules.join(", ")}; ${vars} vars; bindings: ` +
    `${bindingSummary(bindings.filter((b) => b.type !== "plain_text"))}`;
  const script = scriptOr404(ctx.account, ctx.params.name!) ?? newScript(ctx.account, ctx.params.name!);
  applyBindings(script, bindings);
  if (metadata.migrations?.new_tag) script.migrationTag = metadata.migrations.new_tag;
  script.draft = !metadata.compatibility_date;
  const id = newId();
  script.versions.push(id);
  return { script, id };
}

const scriptView = (s: Script) => ({
  id: s.name,
  tag: s.tag,
  created_on: s.created_on,
  modified_on: s.modified_on,
  migration_tag: s.migrationTag ?? undefined,
  last_deployed_from: "wrangler",
  handlers: ["fetch", "queue", "scheduled"],
});

export const workerRoutes: Route[] = [
  route("GET", "/workers/services/:name", ({ account, params }) => {
    const script = scriptOr404(account, params.name!);
    if (!script) return { status: 404, errors: [NOT_FOUND] };
    return {
      result: {
        id: script.name,
        default_environment: { environment: "production", script: scriptView(script) },
        created_on: script.created_on,
        modified_on: script.modified_on,
      },
    };
  }),
  route("GET", "/workers/scripts", ({ account }) => ({ result: [...account.scripts.values()].map(scriptView) })),
  route("GET", "/workers/scripts/:name/secrets", ({ account, params }) => {
    const script = scriptOr404(account, params.name!);
    if (!script) return { status: 404, errors: [NOT_FOUND] };
    return { result: [...script.secrets.keys()].map((name) => ({ name, type: "secret_text" })) };
  }),

  route("PUT", "/workers/scripts/:name/secrets", ({ account, params, body, entry }) => {
    const script = scriptOr404(account, params.name!);
    if (!script) return { status: 404, errors: [NOT_FOUND] };
    const { name, text } = jsonBody<{ name: string; text: string }>(body);
    entry.summary = `secret ${name}`;
    script.secrets.set(name, text);
    return { result: { name, type: "secret_text" } };
  }),
  route("GET", "/workers/scripts/:name/settings", ({ account, params }) => {
    const script = scriptOr404(account, params.name!);
    if (!script) return { status: 404, errors: [NOT_FOUND] };
    return {
      result: {
        bindings: [...script.bindings, ...[...script.secrets.keys()].map((name) => ({ type: "secret_text", name }))],
      },
    };
  }),
  route("PATCH", "/workers/scripts/:name/settings", async (ctx) => {
    const script = scriptOr404(ctx.account, ctx.params.name!);
    if (!script) return { status: 404, errors: [NOT_FOUND] };
    const settings = jsonBody<{ bindings?: Binding[] }>(
      Buffer.from(String((await formOf(ctx)).get("settings") ?? "{}")),
    );
    ctx.entry.summary = `settings: ${bindingSummary(settings.bindings ?? [])}`;
    if (settings.bindings) applyBindings(script, settings.bindings);
    return { result: { bindings: script.bindings } };
  }),
  // A draft (secret put/bulk on a missing Worker), or `wrangler deploy` of a new Worker or one with Durable Object
  // migrations.
  route("PUT", "/workers/scripts/:name", async (ctx) => {
    const { script, id } = await upload(ctx);
    script.deployed = id;
    return { result: { ...scriptView(script), deployment_id: id, etag: hexId(), startup_time_ms: 10 } };
  }),
  // `wrangler deploy` of an existing Worker: a version, then a deployment of it.
  route("POST", "/workers/scripts/:name/versions", async (ctx) => {
    if (!scriptOr404(ctx.account, ctx.params.name!)) return { status: 404, errors: [NOT_FOUND] };
    const { id } = await upload(ctx);
    return { result: { id, number: 1, resources: { script: { etag: hexId() } }, startup_time_ms: 10 } };
  }),
  route("POST", "/workers/scripts/:name/deployments", ({ account, params, body, entry }) => {
    const script = scriptOr404(account, params.name!);
    if (!script) return { status: 404, errors: [NOT_FOUND] };
    const { versions } = jsonBody<{ versions: { version_id: string; percentage: number }[] }>(body);
    entry.summary = versions.map((v) => `${v.version_id} at ${v.percentage}%`).join(", ");
    const full = versions.find((v) => v.percentage === 100 && script.versions.includes(v.version_id));
    if (!full) return { status: 400, errors: [{ code: 10215, message: "Unknown version" }] };
    script.deployed = full.version_id;
    return { result: { id: hexId(), strategy: "percentage", versions } };
  }),
  route("GET", "/workers/scripts/:name/deployments", ({ account, params }) => {
    const script = scriptOr404(account, params.name!);
    if (!script) return { status: 404, errors: [NOT_FOUND] };
    const deployments = script.deployed
      ? [
          {
            id: `deployment-${script.deployed}`,
            source: "wrangler",
            strategy: "percentage",
            author_email: "operator@example.com",
            created_on: script.modified_on,
            annotations: {},
            versions: [{ version_id: script.deployed, percentage: 100 }],
          },
        ]
      : [];
    return { result: { deployments } };
  }),

  route("POST", "/workers/scripts/:name/assets-upload-session", ({ account, body, entry }) => {
    const { manifest } = jsonBody<{ manifest: Record<string, { hash: string; size: number }> }>(body);
    const missing = [...new Set(Object.values(manifest).map((file) => file.hash))].filter(
      (hash) => !account.assetHashes.has(hash),
    );
    entry.summary = `manifest of ${Object.keys(manifest).length} files, ${missing.length} to upload`;
    return { result: { jwt: jwt(missing.length ? "upload" : "completion"), buckets: missing.length ? [missing] : [] } };
  }),
  route("POST", "/workers/assets/upload", async (ctx) => {
    const hashes = [...(await formOf(ctx)).keys()];
    for (const hash of hashes) ctx.account.assetHashes.add(hash);
    ctx.entry.summary = `${hashes.length} asset files`;
    return { result: { jwt: jwt("completion") } };
  }),

  route("PATCH", "/workers/scripts/:name/script-settings", ({ account, params, body, entry }) => {
    if (!scriptOr404(account, params.name!)) return { status: 404, errors: [NOT_FOUND] };
    entry.summary = summarizeJson(jsonBody(body));
    return { result: jsonBody(body) };
  }),
  route("GET", "/workers/subdomain", ({ account }) => ({ result: { subdomain: account.subdomain } })),
  route("GET", "/workers/scripts/:name/subdomain", ({ account, params }) => {
    const script = scriptOr404(account, params.name!);
    if (!script) return { status: 404, errors: [NOT_FOUND] };
    return { result: { enabled: script.workersDev, previews_enabled: script.previews } };
  }),
  route("POST", "/workers/scripts/:name/subdomain", ({ account, params, body, entry }) => {
    const script = scriptOr404(account, params.name!);
    if (!script) return { status: 404, errors: [NOT_FOUND] };
    const wanted = jsonBody<{ enabled: boolean; previews_enabled?: boolean }>(body);
    entry.summary = `enabled: ${wanted.enabled}, previews_enabled: ${wanted.previews_enabled}`;
    script.workersDev = wanted.enabled;
    script.previews = wanted.previews_enabled ?? script.previews;
    return { result: { enabled: script.workersDev, previews_enabled: script.previews } };
  }),
  route("PUT", "/workers/scripts/:name/schedules", ({ account, params, body, entry }) => {
    const script = scriptOr404(account, params.name!);
    if (!script) return { status: 404, errors: [NOT_FOUND] };
    script.crons = jsonBody<{ cron: string }[]>(body).map((s) => s.cron);
    entry.summary = script.crons.join(", ");
    return { result: { schedules: script.crons.map((cron) => ({ cron, created_on: now(), modified_on: now() })) } };
  }),
];
