/**
 * Sandbox money (docs/api.md#sandboxes): an account opened for a sandbox pays only for that
 * sandbox's resources, and no other account pays for them. Checked here, where every spend is
 * decided (a charge, a hold), so no route can forget it.
 */
import { AppError } from "../../src/http/errors";

export class SandboxMoney {
  /** The sandbox whose money this account is; undefined until read (once per object lifetime). */
  private sandboxId: string | null | undefined;

  constructor(private readonly sql: SqlStorage) {}

  mark(sandboxId: string): void {
    this.sql.exec("INSERT INTO sandbox_money (id, sandbox_id) VALUES (1, ?)", sandboxId);
    this.sandboxId = sandboxId;
  }

  /** The account was emptied (AccountObject.void). */
  forget(): void {
    this.sandboxId = undefined;
  }

  of(): string | null {
    this.sandboxId ??=
      this.sql.exec<{ sandbox_id: string }>("SELECT sandbox_id FROM sandbox_money").toArray()[0]?.sandbox_id ?? null;
    return this.sandboxId;
  }

  /**
   * Refuses a spend for a resource outside this money's sandbox (`undefined`: a creation, which joins it); answers the
   * sandbox.
   */
  check(resourceSandbox: string | null | undefined): string | null {
    const mine = this.of();
    if (resourceSandbox === undefined || resourceSandbox === mine) return mine;
    throw new AppError(
      "forbidden",
      mine
        ? `This credit token is sandbox ${mine}'s money: it pays only for that sandbox's resources.`
        : `This resource is in sandbox ${resourceSandbox}: only that sandbox's credit token pays for it.`,
    );
  }

  /** Real money is never added to a sandbox's account. */
  refuseTopUp(): void {
    const mine = this.of();
    if (mine)
      throw new AppError(
        "forbidden",
        `This credit token is sandbox ${mine}'s money: it cannot be topped up (a sandbox's credit is free and fixed).`,
      );
  }
}
