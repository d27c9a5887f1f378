/**
 * A problem config-check.ts finds in a deployment's settings, and what each part of the check
 * (config-payment-check.ts, config-key-check.ts) is handed to report one. Pure, like the check.
 */
export interface ConfigProblem {
  /** The setting (or settings, joined by " / ") to fix. */
  setting: string;
  problem: string;
  fix: string;
  /**
   * `service`: nothing but liveness, the operator endpoints and the documentation is served; `operator`: the operator
   * endpoints are refused.
   */
  scope: "service" | "operator";
}

export type Settings = Readonly<Record<string, string | undefined>>;

/** The settings under check, with the ways to read them and to record a problem. */
export interface SettingsCheck {
  settings: Settings;
  /** The deployment is staging: testnet money is allowed there. */
  staging: boolean;
  add(setting: string, problem: string, fix: string, scope?: ConfigProblem["scope"]): void;
  /** Set, whether its value is known or only its name (`opaque`). */
  has(name: string): boolean;
  /** The trimmed value ("" when unset), or null for a secret known only by name. */
  known(name: string): string | null;
}

/** The fix for a setting `npm run setup` asks for. */
export const SETUP = "`npm run setup` (it asks for this and writes it)";
