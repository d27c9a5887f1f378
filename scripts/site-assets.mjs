/**
 * Copies the API reference's renderer (Redoc's standalone bundle, pinned in package.json)
 * from node_modules into the Worker's static assets, so /docs loads nothing from another
 * origin. Run by postinstall and before dev, test and deploy; the copy is not committed.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
const pkg = JSON.parse(await readFile(require.resolve("redoc/package.json"), "utf8"));
let source = await readFile(require.resolve("redoc/bundles/redoc.standalone.js"), "utf8");

// The bundle's one request to another origin: the "API docs by Redocly" footer's logo, drawn from
// Redocly's CDN. It becomes an empty image, so the page needs nothing beyond this service.
const LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg";
if (!source.includes(LOGO))
  throw new Error(`redoc ${pkg.version}: the logo URL moved; check the bundle for requests to other origins`);
source = source.replaceAll(LOGO, "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E");

// The version is in the file name: the Worker serves it as immutable.
const target = path.resolve("public/vendor", `redoc-${pkg.version}.standalone.js`);
await mkdir(path.dirname(target), { recursive: true });
await writeFile(target, source);
