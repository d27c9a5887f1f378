/**
 * The order test files start in, when several run at once (vitest.config.ts, maxWorkers). vitest's own order
 * runs the projects one after another (api, direct, node), and within one the files it has no timings for by
 * size, so on a clean clone the node project's long runs, which mostly wait on the processes they start
 * (`wrangler dev`, Chromium, the soak's restarts), would come last and end the run alone. They start first here,
 * beside the worker tests, which keep the cores busy meanwhile. With timings from an earlier run (vitest's
 * cache), the longest file starts first, whatever its project; without them, the files named below first.
 * (JavaScript, so that Vite's native config loader can import it from vitest.config.ts by its file name.)
 */
import { BaseSequencer } from "vitest/node";

/** @typedef {import("vitest/node").TestSpecification} TestSpecification */

/**
 * Minutes of waiting each (docs/testing.md, "Where the suite's time goes"): first, longest first. A file missing
 * from the list only starts later; one listed and gone is ignored.
 */
const LONG_FIRST = [
  "test/node/soak.test.ts",
  "test/node/dev-server.test.ts",
  "test/node/pages.test.ts",
  "test/node/setup.test.ts",
  "test/node/operator-page.test.ts",
  "test/node/place.test.ts",
  "test/node/mcp-wrangler-dev.test.ts",
  "test/node/doctor.test.ts",
];

export default class LongFirstSequencer extends BaseSequencer {
  /**
   * @param {TestSpecification[]} files
   * @returns {Promise<TestSpecification[]>}
   */
  async sort(files) {
    const cache = this.ctx.cache;
    const root = this.ctx.config.root;
    /** @param {TestSpecification} s */
    const relative = (s) => s.moduleId.slice(root.length + 1);
    /** @param {TestSpecification} s */
    const key = (s) => `${s.project.name}:${relative(s)}`;
    /** @param {TestSpecification} s */
    const duration = (s) => cache.getFileTestResults(key(s))?.duration;
    /** @param {TestSpecification} s */
    const listed = (s) => {
      const at = LONG_FIRST.indexOf(relative(s));
      return at === -1 ? LONG_FIRST.length : at;
    };
    /** @param {TestSpecification} s */
    const size = (s) => cache.getFileStats(key(s))?.size ?? 0;
    return [...files].sort((a, b) => {
      const [da, db] = [duration(a), duration(b)];
      if (da !== undefined && db !== undefined) return db - da;
      return listed(a) - listed(b) || size(b) - size(a);
    });
  }
}
