/**
 * A sandbox's id names its account too: the sandbox's credit token is that account's, so the token
 * alone says which sandbox it can speak for, with no lookup (docs/api.md#sandboxes).
 */
export const SANDBOX_ID_PATTERN = /^sbx_[0-9A-Za-z]{22}$/;

export const sandboxIdOf = (accountId: string): string => `sbx_${accountId.slice("acct_".length)}`;

export const accountIdOf = (sandboxId: string): string => `acct_${sandboxId.slice("sbx_".length)}`;
