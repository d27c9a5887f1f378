/**
 * Prints the slowest test files at the end of a run (issue 36 wants the suite under 30 minutes: this
 * says where its time goes). A file's time is its import (collect), its setup file and its tests and
 * hooks, as vitest measures them; files of a project run in parallel, so the times overlap the wall clock.
 */
import path from "node:path";
import type { Reporter, TestModule } from "vitest/node";

const COUNT = 10;

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`.padStart(8);

export default class SlowestFiles implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const timed = modules.map((m) => {
      const d = m.diagnostic();
      return {
        file: path.relative(process.cwd(), m.moduleId),
        project: m.project.name,
        tests: d.duration,
        total: d.collectDuration + d.setupDuration + d.duration,
      };
    });
    if (timed.length < 2) return;
    timed.sort((a, b) => b.total - a.total);
    const lines = timed
      .slice(0, COUNT)
      .map((t) => `${seconds(t.total)} ${seconds(t.tests)}  ${t.project.padEnd(6)} ${t.file}`);
    const sum = timed.reduce((s, t) => s + t.total, 0);
    console.log(
      `\nSlowest ${Math.min(COUNT, timed.length)} of ${timed.length} test files (total, of which tests and ` +
        `hooks; all files together ${seconds(sum).trim()}):\n${lines.join("\n")}\n`,
    );
  }
}
