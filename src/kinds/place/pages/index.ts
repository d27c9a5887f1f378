/**
 * pages: one HTML or Markdown page at a public address (a status page, a report an agent
 * publishes, a landing page). Markdown is rendered safely; HTML is served as written, sandboxed,
 * its scripts off unless the owner opts in. Served with ETag and Last-Modified (304 on a
 * conditional GET), updated in place, views counted, title and description for link previews.
 */
import { noInput } from "../../../openapi/schemas";
import { kindOf } from "../../../kind/kind";
import { pagesFace } from "./public";
import { create, row, TABLES, update, view } from "./store";
import {
  MAX_CONTENT_BYTES,
  pageContent,
  pageCreate,
  pageUpdate,
  pageView,
  type PageConfig,
  type PageCreate,
} from "./schema";

const OP_PRICE = 100; // µUSD, $0.0001

/**
 * The create body (with the content) on the way in; what the record shows once the content went to the page's storage.
 */
type Config = PageCreate | PageConfig;

const kind = kindOf<Config>();

export const pages = kind.define({
  kind: "pages",
  family: "place",
  title: "Static page",
  summary:
    `One HTML or Markdown page (up to ${MAX_CONTENT_BYTES} bytes) at a public address: Markdown rendered ` +
    `safely, HTML served as written and sandboxed ` +
    "(scripts only if opted in); ETag, Last-Modified and 304; updated in place; views counted; title and " +
    "description for link previews. Views are free.",
  createSchema: pageCreate,
  example: {
    format: "markdown",
    content: "# Nightly report\n\nAll **42** checks passed at 02:00 UTC.\n\n- build: ok\n- deploy: ok\n",
    title: "Nightly report",
    description: "Results of the nightly checks.",
  },
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 1000,
  defaultTtlSeconds: 7 * 86400,
  maxTtlSeconds: 365 * 86400,
  limits: { max_content_bytes: MAX_CONTENT_BYTES },
  // The content lives in the page's storage, not in the record (which shows the settings as created).
  sealCreate: async (_env, config) => {
    if (!("content" in config)) throw new Error("pages: sealCreate expects the create body");
    const { content: _content, ...shown } = config;
    return { config: shown, sealed: config };
  },
  init: (store, _config, sealed) => create(store, pageCreate.parse(sealed)),
  usage: (store) => {
    const v = view(store.sql);
    return { views: v.views, version: v.version, bytes: v.bytes };
  },
  exportData: (store) => ({ page: view(store.sql), content: row(store.sql).content }),
  public: pagesFace,
  ops: [
    kind.op({
      name: "get",
      method: "get",
      path: "",
      summary: "The page's settings, size, version, ETag and views",
      priceMicro: OP_PRICE,
      input: noInput,
      output: pageView,
      run: (store) => view(store.sql),
    }),
    kind.op({
      name: "get_content",
      method: "get",
      path: "/content",
      summary: "The page's source as last set",
      priceMicro: OP_PRICE,
      input: noInput,
      output: pageContent,
      run: (store) => {
        const p = row(store.sql);
        return { format: p.format, content: p.content, version: p.version };
      },
    }),
    kind.op({
      name: "update",
      method: "put",
      path: "",
      summary: "Change the content, format, title, description or settings in place (the address stays)",
      priceMicro: 1000,
      input: pageUpdate,
      output: pageView,
      example: {
        input: {
          content: "# Nightly report\n\nOne check **failed** at 02:00 UTC.\n",
          description: "One check failed.",
        },
      },
      run: (store, _config, input) => update(store, input),
    }),
  ],
});
