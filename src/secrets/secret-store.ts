import { randomBytes } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "pino";
import { errorMessage, FailedPreconditionError, InternalError, ResourceExhaustedError } from "../errors/index.js";
import { createKeyFile, KEY_BYTES, readKeyFile } from "./key-file.js";
import { removeDurably, renameDurably, writePrivateFileAtomic } from "./private-files.js";
import { entryAad, opensKeyCheck, seal, sealKeyCheck, unseal } from "./secret-cipher.js";
import { MAX_SECRETS_PER_AGENT, validateSecretName, validateSecretValue } from "./secret-rules.js";
import { KEY_FILE_SETTING, SecretNotFoundError, SecretsStoreError } from "./secrets-errors.js";
import { parseStore, serializeStore, STORE_FILE, type StoreContent, type StoredEntry } from "./store-file.js";

/**
 * The seam the control plane runs skills through (docs/security.md#secrets): an agent's values of the names a skill
 * declares, looked up just before its run.
 */
export interface SecretValues {
  /** The agent's values of `names` that exist (a name it has not set is absent from the map). Never logs a value. */
  valuesFor(agentId: string, names: readonly string[]): Promise<ReadonlyMap<string, string>>;
}

/** A secret as anybody may see it: its name and dates, never its value. */
export interface SecretInfo {
  readonly name: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** The durable steps of a key rotation, in order (docs/security.md#rotating-the-key). */
export type RotationStep = "next-key-written" | "store-rewritten";

export interface SecretStoreOptions {
  /** SKILL_ENGINE_HOME: the store is {@link STORE_FILE} in it. */
  readonly home: string;
  /** SKILL_ENGINE_SECRETS_KEY_FILE; created (0600) on first start when neither it nor the store exists. */
  readonly keyFile: string;
  readonly logger?: Logger;
  /** When secrets are created and updated. @default () => new Date() */
  readonly clock?: () => Date;
  /**
   * Called after each durable step of a key rotation, before the next one changes anything: what is on disk then is
   * what a crash at that point leaves (tests copy it there).
   */
  readonly onRotationStep?: (step: RotationStep) => void | Promise<void>;
}

/**
 * The encrypted store (docs/security.md#the-store): one entry per (agent, name), AES-256-GCM under the key in
 * SKILL_ENGINE_SECRETS_KEY_FILE with the agent and name as associated data, in `$SKILL_ENGINE_HOME/secrets.json`
 * (0600, rewritten whole and atomically on each change). Values are decrypted only when asked for; changes are
 * serialized, and each is on disk before it is visible.
 */
export class SecretStore implements SecretValues {
  /** The current key and the entries sealed under it, swapped together so a read never pairs one with the other's. */
  private state: { key: Buffer; keyCheck: StoreContent["keyCheck"]; entries: Map<string, Map<string, StoredEntry>> };
  private queue: Promise<unknown> = Promise.resolve();
  /** A rotation re-encrypted the store but could not move its key into place; the next rotation does that first. */
  private keyRenamePending = false;

  private constructor(
    private readonly options: SecretStoreOptions,
    readonly file: string,
    key: Buffer,
    content: StoreContent,
  ) {
    this.state = { key, keyCheck: content.keyCheck, entries: byAgent(content.entries) };
  }

  /**
   * Opens the store, creating the key and an empty store on first start, and finishing a key rotation a crash cut
   * short. Every entry is decrypted once, so a store that does not open fails here, never in a run. Throws
   * SecretsStoreError (naming SKILL_ENGINE_SECRETS_KEY_FILE or the store's file) when the key file is unsafe or
   * malformed, does not open the store, or the store was changed outside the service.
   */
  static async open(options: SecretStoreOptions): Promise<SecretStore> {
    const file = path.join(options.home, STORE_FILE);
    const keyFile = options.keyFile;
    const nextFile = nextKeyFile(keyFile);
    const text = await readFile(file, "utf8").catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw new SecretsStoreError(`the secrets store ${file} cannot be read: ${errorMessage(error)}`, { cause: error });
    });
    const key = await readKeyFile(keyFile);
    const next = await readKeyFile(nextFile);

    if (text === undefined) {
      // First start (or a store moved away on purpose): an empty store under the key, made when missing.
      const usedKey = key ?? (await createKeyFile(keyFile));
      if (next !== undefined) await removeDurably(nextFile);
      const content: StoreContent = { keyCheck: sealKeyCheck(usedKey), entries: [] };
      await writePrivateFileAtomic(file, serializeStore(content));
      options.logger?.info({ store: file, keyFile, keyCreated: key === undefined }, "secrets store created");
      return new SecretStore(options, file, usedKey, content);
    }

    const content = parseStore(text, file);
    let usedKey: Buffer;
    if (key !== undefined && opensKeyCheck(key, content.keyCheck)) {
      usedKey = key;
      // A rotation stopped before the store was rewritten: it never happened.
      if (next !== undefined) {
        await removeDurably(nextFile);
        options.logger?.warn({ keyFile }, "an interrupted key rotation left a new key unused; the store stays under the old key");
      }
    } else if (next !== undefined && opensKeyCheck(next, content.keyCheck)) {
      // A rotation stopped after the store was rewritten under the new key: the key moves into place.
      await renameDurably(nextFile, keyFile);
      usedKey = next;
      options.logger?.warn({ keyFile }, "finished an interrupted key rotation: the new key is now in place");
    } else {
      throw new SecretsStoreError(
        key === undefined
          ? `${KEY_FILE_SETTING} ${keyFile} does not exist, but the secrets store ${file} does: restore the key file from the ` +
              "backup the store came from (the store cannot be read without it), or move the store away to start with no secrets"
          : `${KEY_FILE_SETTING} ${keyFile} does not open the secrets store ${file}: it is not the key the store was written ` +
              "with. Restore the key file and the store from the same backup, or move the store away to start with no secrets",
      );
    }

    for (const entry of content.entries) {
      if (unseal(usedKey, entryAad(entry.agentId, entry.name), entry.sealed) === undefined) {
        throw new SecretsStoreError(
          `the secrets store ${file}: agent ${entry.agentId}'s secret ${entry.name} does not decrypt under ${KEY_FILE_SETTING} ` +
            `${keyFile}, which opens the rest of the store: the entry was changed outside the service (edited, or moved ` +
            "to another agent or name). Restore the store from a backup, or remove the entry and set the secret again",
        );
      }
    }
    const mode = (await stat(file)).mode & 0o777;
    if ((mode & 0o077) !== 0)
      options.logger?.warn(
        { store: file, mode: mode.toString(8) },
        "secrets store is readable by others; rewritten 0600 on the next change",
      );
    options.logger?.info({ store: file, secrets: content.entries.length }, "secrets store opened");
    return new SecretStore(options, file, usedKey, content);
  }

  /** Sets `name` for `agentId`, creating it or replacing its value (its created_at is kept). */
  async set(agentId: string, name: string, value: string): Promise<SecretInfo> {
    validateSecretName(name);
    validateSecretValue(value);
    return this.exclusive(async () => {
      const { key, keyCheck, entries } = this.state;
      const own = entries.get(agentId);
      const existing = own?.get(name);
      if (existing === undefined && (own?.size ?? 0) >= MAX_SECRETS_PER_AGENT) {
        throw new ResourceExhaustedError(
          `agent ${agentId} already has ${MAX_SECRETS_PER_AGENT} secrets, the most one agent may keep; delete one it no longer needs`,
        );
      }
      const now = this.now();
      const entry: StoredEntry = {
        agentId,
        name,
        sealed: seal(key, entryAad(agentId, name), Buffer.from(value, "utf8")),
        createdAt: existing?.createdAt ?? now,
        updatedAt: now,
      };
      const changed = withEntry(entries, entry);
      await this.persist({ keyCheck, entries: flatten(changed) }, "the secret was not saved");
      this.state = { key, keyCheck, entries: changed };
      return infoOf(entry);
    });
  }

  /** Deletes `name` of `agentId`; SecretNotFoundError when the agent has no such secret. */
  async delete(agentId: string, name: string): Promise<void> {
    validateSecretName(name);
    return this.exclusive(async () => {
      const { key, keyCheck, entries } = this.state;
      if (entries.get(agentId)?.has(name) !== true) throw new SecretNotFoundError(agentId, name);
      const changed = withoutEntry(entries, agentId, name);
      await this.persist({ keyCheck, entries: flatten(changed) }, "the secret was not deleted");
      this.state = { key, keyCheck, entries: changed };
    });
  }

  /** The agent's secrets, by name: names and dates only. */
  list(agentId: string): SecretInfo[] {
    return [...(this.state.entries.get(agentId)?.values() ?? [])]
      .map(infoOf)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async valuesFor(agentId: string, names: readonly string[]): Promise<ReadonlyMap<string, string>> {
    const { key, entries } = this.state;
    const own = entries.get(agentId);
    const values = new Map<string, string>();
    for (const name of names) {
      const entry = own?.get(name);
      if (entry === undefined || values.has(name)) continue;
      const plain = unseal(key, entryAad(agentId, name), entry.sealed);
      // Every entry opened at start and each was written by this process since: only a bug gets here.
      if (plain === undefined) throw new InternalError(`agent ${agentId}'s secret ${name} does not decrypt`);
      values.set(name, plain.toString("utf8"));
    }
    return values;
  }

  /**
   * Re-encrypts every entry under a new random key, crash-safe (docs/security.md#rotating-the-key): the new key is
   * written to `<key file>.next`, then the store under it, then the key is renamed into place. A crash before the
   * store's rewrite leaves the old key in force; after it, the next start finishes the rotation.
   */
  rotateKey(): Promise<{ rotated: number }> {
    return this.exclusive(async () => {
      const { keyFile } = this.options;
      const nextFile = nextKeyFile(keyFile);
      if (this.keyRenamePending) await this.moveNextKeyIntoPlace(nextFile);

      const { key, entries } = this.state;
      const newKey = randomBytes(KEY_BYTES);
      const resealed = flatten(entries).map((entry): StoredEntry => {
        const aad = entryAad(entry.agentId, entry.name);
        const plain = unseal(key, aad, entry.sealed);
        if (plain === undefined) throw new InternalError(`agent ${entry.agentId}'s secret ${entry.name} does not decrypt`);
        return { ...entry, sealed: seal(newKey, aad, plain) };
      });
      const content: StoreContent = { keyCheck: sealKeyCheck(newKey), entries: resealed };

      try {
        await writePrivateFileAtomic(nextFile, newKey);
      } catch (error) {
        throw new FailedPreconditionError(
          `cannot write the new key to ${nextFile} beside ${KEY_FILE_SETTING} (${errorMessage(error)}); nothing was changed`,
          { cause: error },
        );
      }
      await this.options.onRotationStep?.("next-key-written");
      try {
        await this.persist(content, "the key was not rotated");
      } catch (error) {
        await removeDurably(nextFile).catch(() => undefined);
        throw error;
      }
      // From here the store on disk is under the new key: so is this process.
      this.state = { key: newKey, keyCheck: content.keyCheck, entries: byAgent(resealed) };
      this.keyRenamePending = true;
      await this.options.onRotationStep?.("store-rewritten");
      await this.moveNextKeyIntoPlace(nextFile);
      this.options.logger?.info({ keyFile, rotated: resealed.length }, "secrets key rotated");
      return { rotated: resealed.length };
    });
  }

  private async moveNextKeyIntoPlace(nextFile: string): Promise<void> {
    try {
      await renameDurably(nextFile, this.options.keyFile);
    } catch (error) {
      throw new InternalError(
        `the store is re-encrypted under the new key in ${nextFile}, which could not be moved to ${KEY_FILE_SETTING} ` +
          `${this.options.keyFile} (${errorMessage(error)}); the next rotation or start moves it`,
        { cause: error },
      );
    }
    this.keyRenamePending = false;
  }

  private async persist(content: StoreContent, notDone: string): Promise<void> {
    try {
      await writePrivateFileAtomic(this.file, serializeStore(content));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOSPC" || code === "EDQUOT") {
        throw new ResourceExhaustedError(`the disk under SKILL_ENGINE_HOME is full: ${notDone}`, { cause: error });
      }
      throw new InternalError(`cannot write the secrets store ${this.file} (${errorMessage(error)}): ${notDone}`, { cause: error });
    }
  }

  private now(): Date {
    return this.options.clock?.() ?? new Date();
  }

  /** Runs changes one at a time, in the order they came. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const result = this.queue.then(work);
    this.queue = result.catch(() => undefined);
    return result;
  }
}

/** Where a rotation writes the new key before the store is rewritten under it. */
export function nextKeyFile(keyFile: string): string {
  return `${keyFile}.next`;
}

function infoOf(entry: StoredEntry): SecretInfo {
  return { name: entry.name, createdAt: entry.createdAt, updatedAt: entry.updatedAt };
}

function byAgent(entries: readonly StoredEntry[]): Map<string, Map<string, StoredEntry>> {
  const map = new Map<string, Map<string, StoredEntry>>();
  for (const entry of entries) {
    const own = map.get(entry.agentId) ?? new Map<string, StoredEntry>();
    own.set(entry.name, entry);
    map.set(entry.agentId, own);
  }
  return map;
}

function flatten(entries: ReadonlyMap<string, ReadonlyMap<string, StoredEntry>>): StoredEntry[] {
  return [...entries.values()].flatMap((own) => [...own.values()]);
}

/** A copy of `entries` with `entry` in it; the original is left as it is until the change is on disk. */
function withEntry(
  entries: ReadonlyMap<string, ReadonlyMap<string, StoredEntry>>,
  entry: StoredEntry,
): Map<string, Map<string, StoredEntry>> {
  const copy = new Map([...entries].map(([agent, own]) => [agent, new Map(own)]));
  const own = copy.get(entry.agentId) ?? new Map<string, StoredEntry>();
  own.set(entry.name, entry);
  copy.set(entry.agentId, own);
  return copy;
}

function withoutEntry(
  entries: ReadonlyMap<string, ReadonlyMap<string, StoredEntry>>,
  agentId: string,
  name: string,
): Map<string, Map<string, StoredEntry>> {
  const copy = new Map([...entries].map(([agent, own]) => [agent, new Map(own)]));
  copy.get(agentId)?.delete(name);
  if (copy.get(agentId)?.size === 0) copy.delete(agentId);
  return copy;
}
