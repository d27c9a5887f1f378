/** Request and response shapes of one-time secrets; the same schemas validate, type and document. */
import { utf8Length } from "../../../bytes";
import { z } from "@hono/zod-openapi";

/** The secret's text, in UTF-8 bytes (binary: send it base64-encoded). */
export const MAX_VALUE_BYTES = 64 * 1024;
export const MAX_PASSPHRASE_LENGTH = 1024;
export const MAX_ATTEMPTS = 20;

export const secretCreate = z.object({
  value: z
    .string()
    .min(1)
    .refine((v) => utf8Length(v) <= MAX_VALUE_BYTES, `must be at most ${MAX_VALUE_BYTES} bytes of UTF-8`)
    .describe(
      `The secret, 1 to ${MAX_VALUE_BYTES} bytes of text. Encrypted at once; never shown again except, ` +
        `once, at the public address.`,
    ),
  passphrase: z
    .string()
    .min(1)
    .max(MAX_PASSPHRASE_LENGTH)
    .optional()
    .describe(
      "Needed to reveal the secret. Only a PBKDF2 verifier is kept, and the value is also encrypted under " +
        "a key derived from it.",
    ),
  max_passphrase_attempts: z
    .int()
    .min(1)
    .max(MAX_ATTEMPTS)
    .default(5)
    .describe("Wrong passphrases tolerated: the last of them destroys the secret unread."),
});
export type SecretCreate = z.infer<typeof secretCreate>;

/** What the record shows as config: sealCreate takes the value and passphrase out. */
export type SecretConfig = { passphrase_required: boolean; max_passphrase_attempts: number };

export const SECRET_STATES = ["unread", "read", "burned"] as const;

export const secretStatus = z
  .object({
    state: z
      .enum(SECRET_STATES)
      .describe("unread: it can be revealed once; read: it was, and is gone; burned: destroyed unread."),
    read: z.boolean(),
    read_at: z.string().nullable().describe("When it was revealed."),
    burned_at: z.string().nullable(),
    burn_reason: z
      .enum(["owner", "passphrase_attempts"])
      .nullable()
      .describe("Burned by the owner, or by too many wrong passphrases."),
    passphrase_required: z.boolean(),
    failed_passphrase_attempts: z.int(),
    max_passphrase_attempts: z.int(),
  })
  .openapi("SecretStatus");
export type SecretStatus = z.infer<typeof secretStatus>;
