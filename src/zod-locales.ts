/**
 * What the deployable bundle gets for zod's `locales` namespace (wrangler.toml [alias]): English only. zod
 * exports every language's error messages as a namespace, `z.locales`, that nothing here reads, and a
 * namespace cannot be tree-shaken: 64 modules, 366 KiB, were compiled and run by every isolate's start.
 * zod itself registers English (from its own module) whatever this exports.
 */
export { default as en } from "zod/v4/locales/en.js";
