/**
 * links: an expiring share link (bit.ly meets transfer.sh). Its public address redirects to a
 * target URL, or serves one of the owner's blobs or objects, until it expires or has been
 * followed max_clicks times (then 410). Clicks are counted and logged with the time, the
 * referrer's host and the country where Cloudflare knows it.
 */
import { noInput } from "../../../openapi/schemas";
import { kindOf } from "../../../kind/kind";
import { checkOwnedResource } from "../../../kind/owned";
import { linksFace } from "./public";
import { allClicks, clicksPage, init, TABLES, view } from "./store";
import {
  clicksInput,
  clicksPage as pageSchema,
  linkCreate,
  linkView,
  MAX_CLICK_LOG,
  MAX_CLICKS,
  type LinkConfig,
  type LinkCreate,
} from "./schema";

const OP_PRICE = 100; // µUSD, $0.0001

const kind = kindOf<LinkConfig>();

export const links = kind.define({
  kind: "links",
  family: "place",
  title: "Expiring share link",
  summary:
    "A short public URL that redirects (302 or 307) to a target URL, or serves one of your blobs or " +
    "objects, until it expires or max_clicks is reached " +
    `(then 410); clicks counted and logged (time, referrer host, country; the newest ${MAX_CLICK_LOG}` +
    `). Clicks are free.`,
  createSchema: linkCreate,
  example: { target_url: "https://example.com/reports/2026-11.pdf", max_clicks: 100 },
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 500,
  defaultTtlSeconds: 7 * 86400,
  maxTtlSeconds: 365 * 86400,
  limits: { max_clicks: MAX_CLICKS, click_log_entries: MAX_CLICK_LOG },
  // The content's management token proves the owner holds it; only the resource's id is kept.
  sealCreate: async (env, config) => {
    const { content, ...rest } = config as LinkCreate;
    if (content === undefined) return { config: rest, sealed: null };
    return {
      config: { ...rest, content_resource_id: await checkOwnedResource(env, content, ["blobs", "objects"], "content") },
      sealed: null,
    };
  },
  init,
  usage: (store, config) => {
    const v = view(store.sql, config);
    return { clicks: v.clicks, refused: v.refused };
  },
  exportData: (store, config) => ({ link: view(store.sql, config), clicks: allClicks(store.sql) }),
  public: linksFace,
  ops: [
    kind.op({
      name: "get",
      method: "get",
      path: "",
      summary: "The link's target, clicks, remaining clicks and last click",
      priceMicro: OP_PRICE,
      input: noInput,
      output: linkView,
      run: (store, config) => view(store.sql, config),
    }),
    kind.op({
      name: "list_clicks",
      method: "get",
      path: "/clicks",
      summary: "The click log, newest first (time, referrer host, country)",
      priceMicro: OP_PRICE,
      input: clicksInput,
      output: pageSchema,
      example: { input: { limit: 50 } },
      run: (store, _config, input) => clicksPage(store.sql, input.limit, input.cursor),
    }),
  ],
});
