import { InvalidArgumentError } from "../../errors/index.js";

/** What a secret's name may be (docs/security.md#declaring-and-delivering): an environment variable's name. */
export const SECRET_NAME_PATTERN = /^[A-Z_][A-Z0-9_]{0,63}$/;

/** Secrets one version may declare at most (docs/security.md#declaring-and-delivering). */
export const MAX_DECLARED_SECRETS = 32;

/**
 * Names the sandbox sets itself or that steer the interpreter and the loader of every process in
 * the run: a secret under one of them would change how the run works, not only what it reads.
 */
const RESERVED_NAMES = new Set(["PATH", "HOME", "LANG", "LANGUAGE", "TMPDIR", "PWD", "SHELL", "USER"]);
const RESERVED_PREFIXES = ["PYTHON", "LD_", "LC_"];

/**
 * A version's declared secret names, checked (docs/security.md#declaring-and-delivering): each
 * matches {@link SECRET_NAME_PATTERN} and is not one the sandbox reserves, none twice, at most
 * {@link MAX_DECLARED_SECRETS}. Kept in the order given. INVALID_ARGUMENT naming the entry
 * (`secrets[2]`) otherwise; `field` is how the caller wrote the list (`secrets`, `SKILL.md metadata.secrets`).
 */
export function validateSecretNames(field: string, names: readonly string[]): string[] {
  if (names.length > MAX_DECLARED_SECRETS) {
    throw new InvalidArgumentError(field, `declares ${names.length} secrets; at most ${MAX_DECLARED_SECRETS} may be declared`);
  }
  const seen = new Set<string>();
  for (const [index, name] of names.entries()) {
    const entry = `${field}[${index}]`;
    if (!SECRET_NAME_PATTERN.test(name)) {
      throw new InvalidArgumentError(
        entry,
        `${JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name)} is not a secret name: upper-case letters, digits and _, ` +
          "not starting with a digit, at most 64 characters (^[A-Z_][A-Z0-9_]{0,63}$)",
      );
    }
    if (RESERVED_NAMES.has(name) || RESERVED_PREFIXES.some((prefix) => name.startsWith(prefix))) {
      throw new InvalidArgumentError(
        entry,
        `"${name}" is reserved: the sandbox sets it or it steers the interpreter (PATH, HOME, LANG, TMPDIR, PWD, SHELL, USER, PYTHON*, LD_*, LC_*); choose another name`,
      );
    }
    if (seen.has(name)) throw new InvalidArgumentError(entry, `"${name}" is declared twice`);
    seen.add(name);
  }
  return [...names];
}
