import { InvalidArgumentError } from "../errors/index.js";

/**
 * A secret's name (docs/security.md#secrets): what the skill reads it as, an environment variable's name, so
 * upper-case letters, digits and underscores, not starting with a digit, at most 64 characters.
 */
export const SECRET_NAME_PATTERN = /^[A-Z_][A-Z0-9_]{0,63}$/;

/**
 * The smallest value, in UTF-8 bytes: redaction replaces every occurrence of a value in what a run returns, and a
 * value of 1 to 3 bytes cannot be told apart from ordinary output.
 */
export const MIN_SECRET_VALUE_BYTES = 4;

/** The largest value, in UTF-8 bytes (64 KiB): enough for a key, a certificate or a service account file. */
export const MAX_SECRET_VALUE_BYTES = 64 * 1024;

/** Secrets one agent may keep; the store is rewritten whole on each change, so it stays small. */
export const MAX_SECRETS_PER_AGENT = 100;

/** INVALID_ARGUMENT naming the rule, or nothing for a good name. */
export function validateSecretName(name: string, field = "name"): void {
  if (!SECRET_NAME_PATTERN.test(name)) {
    throw new InvalidArgumentError(
      field,
      `"${name.slice(0, 80)}" is not a secret name: 1–64 characters of A–Z, 0–9 and _, not starting with a digit ` +
        `(${SECRET_NAME_PATTERN.source}), as an environment variable is named`,
    );
  }
}

/**
 * INVALID_ARGUMENT naming the rule, or nothing for a good value. The message never quotes the value: it would reach
 * the caller's logs.
 */
export function validateSecretValue(value: string, field = "value"): void {
  const bytes = Buffer.byteLength(value, "utf8");
  if (bytes < MIN_SECRET_VALUE_BYTES) {
    throw new InvalidArgumentError(
      field,
      `is ${bytes} byte${bytes === 1 ? "" : "s"}; a secret's value is at least ${MIN_SECRET_VALUE_BYTES} bytes of UTF-8, since ` +
        "a shorter one cannot be told apart from ordinary output when it is redacted",
    );
  }
  if (bytes > MAX_SECRET_VALUE_BYTES) {
    throw new InvalidArgumentError(
      field,
      `is ${bytes} bytes; a secret's value is at most ${MAX_SECRET_VALUE_BYTES} bytes (64 KiB) of UTF-8`,
    );
  }
  if (value.includes("\0")) {
    throw new InvalidArgumentError(field, "holds a NUL character, which no environment variable can carry");
  }
}
