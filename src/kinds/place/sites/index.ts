/**
 * sites: a static site from a zip (Netlify's zip deploy). The archive streams in and is unpacked
 * into R2 (never held whole; zip slip and zip bombs refused with 422); the new version goes live
 * in one transaction, the previous one is kept for a rollback and the one before it deleted.
 * Served at the public address with index.html, directory indexes, an optional SPA fallback,
 * content types by extension, ETag and 304, Cache-Control; HTML sandboxed, scripts only if opted in.
 */
import { strToU8, zipSync } from "fflate";
import { binaryString } from "../../../bytes";
import { noInput, rawBodyInput } from "../../../openapi/schemas";
import { kindOf } from "../../../kind/kind";
import { sitesFace } from "./public";
import { deploysPage, discard, exportSite, filesPage, publish, rollback, stage, TABLES, usage, view } from "./store";
import {
  deploysInput,
  deploysPage as deploysSchema,
  deployView,
  filesInput,
  filesPage as filesSchema,
  LIMITS,
  siteCreate,
  siteView,
  type SiteConfig,
} from "./schema";

const OP_PRICE = 100; // µUSD, $0.0001

/** A one-page site, zipped (stored, dated 2026-01-01 so the published example never changes). */
const EXAMPLE_ZIP = binaryString(
  zipSync(
    { "index.html": strToU8("<!doctype html><title>Hello</title><h1>Hello</h1>") },
    { level: 0, mtime: new Date("2026-01-01T00:00:00Z") },
  ),
);

const kind = kindOf<SiteConfig>();

export const sites = kind.define({
  kind: "sites",
  family: "place",
  title: "Static site",
  summary:
    `A static site from a zip (up to ${LIMITS.max_zip_bytes} bytes, ${LIMITS.max_files} files) unpacked ` +
    `into R2 as it streams in and served at a public address: ` +
    "index.html, directory indexes, SPA fallback, content types, ETag and 304, Cache-Control; redeploys " +
    "swap atomically, the previous version kept for a rollback. Serving is free.",
  createSchema: siteCreate,
  example: { spa_fallback: true, cache_seconds: 3600 },
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 2000,
  defaultTtlSeconds: 30 * 86400,
  maxTtlSeconds: 365 * 86400,
  limits: { ...LIMITS },
  usage: (store) => usage(store.sql),
  exportData: (store, config) => exportSite(store, config),
  public: sitesFace,
  ops: [
    kind.op({
      name: "deploy",
      method: "put",
      path: "/deploy",
      summary:
        "Deploy a zip archive (the body, application/zip): unpacked as it streams in, then made live at " +
        "once; the previous version is kept for a rollback",
      priceMicro: 10_000,
      input: rawBodyInput,
      output: deployView,
      rawBody: true,
      maxBodyBytes: LIMITS.max_zip_bytes,
      errors: [413],
      example: { headers: { "content-type": "application/zip" }, bytes: EXAMPLE_ZIP },
      prepare: (ctx, _config, _input, body) => stage(ctx, body),
      run: (store, _config, _input, staged) => publish(store, staged),
      discard,
    }),
    kind.op({
      name: "get",
      method: "get",
      path: "",
      summary: "The live and previous versions and the settings",
      priceMicro: OP_PRICE,
      input: noInput,
      output: siteView,
      run: (store, config) => view(store.sql, config),
    }),
    kind.op({
      name: "list_files",
      method: "get",
      path: "/files",
      summary: "The live version's files, by path",
      priceMicro: OP_PRICE,
      input: filesInput,
      output: filesSchema,
      example: { input: { limit: 100 }, after: ["deploy"] },
      run: (store, _config, input) => filesPage(store.sql, input.limit, input.cursor),
    }),
    kind.op({
      name: "list_deploys",
      method: "get",
      path: "/deploys",
      summary: "Every deploy, newest first, with its state (live, previous, retired)",
      priceMicro: OP_PRICE,
      input: deploysInput,
      output: deploysSchema,
      example: { input: { limit: 20 } },
      run: (store, _config, input) => deploysPage(store.sql, input.limit, input.cursor),
    }),
    kind.op({
      name: "rollback",
      method: "post",
      path: "/rollback",
      summary: "Make the previous version live again (409 when there is none); again, and the rollback is undone",
      priceMicro: 1000,
      input: noInput,
      output: deployView,
      errors: [409],
      example: { after: ["deploy", "deploy"] },
      run: (store) => rollback(store),
    }),
  ],
});
