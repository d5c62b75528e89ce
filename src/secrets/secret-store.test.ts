import { randomBytes } from "node:crypto";
import { chmod, copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InvalidArgumentError, NotFoundError, ResourceExhaustedError } from "../errors/index.js";
import { entryAad, seal, unseal } from "./secret-cipher.js";
import { MAX_SECRETS_PER_AGENT } from "./secret-rules.js";
import { nextKeyFile, type RotationStep, SecretStore } from "./secret-store.js";
import { SecretsStoreError } from "./secrets-errors.js";
import { STORE_FILE } from "./store-file.js";

const API_KEY = "sk-live-4f9a0c1e7b2d-very-secret";
const TOKEN = "ghp_0123456789abcdefTOKEN";

describe("the secrets store", () => {
  let root: string;
  let home: string;
  let keyFile: string;
  const storeFile = (): string => path.join(home, STORE_FILE);
  const open = (options: { home?: string; keyFile?: string; onRotationStep?: (step: RotationStep) => Promise<void> } = {}) =>
    SecretStore.open({ home: options.home ?? home, keyFile: options.keyFile ?? keyFile, ...options });
  const refusal = (promise: Promise<unknown>): Promise<Error> =>
    promise.then(
      () => new Error("expected the store to be refused"),
      (error: unknown) => error as Error,
    );
  const mode = async (file: string): Promise<number> => (await stat(file)).mode & 0o777;

  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "secret-store-"));
    home = path.join(root, "home");
    await mkdir(home, { mode: 0o700 });
    keyFile = path.join(home, "secrets.key");
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("creates a 32-byte key and an empty store, both 0600, on first start", async () => {
    const store = await open();
    expect(store.list("alice")).toEqual([]);
    expect((await readFile(keyFile)).length).toBe(32);
    expect(await mode(keyFile)).toBe(0o600);
    expect(await mode(storeFile())).toBe(0o600);
    await store.set("alice", "API_KEY", API_KEY);
    expect(await mode(storeFile())).toBe(0o600);
    // Nothing but the key and the store: no temp file left behind.
    expect((await readdir(home)).sort()).toEqual(["secrets.json", "secrets.key"]);
  });

  it("keeps values across a reopen, per agent, and never writes one in clear", async () => {
    let now = new Date("2025-01-01T00:00:00Z");
    const store = await SecretStore.open({ home, keyFile, clock: () => now });
    const created = await store.set("alice", "API_KEY", API_KEY);
    await store.set("bob", "API_KEY", TOKEN);
    now = new Date("2025-01-02T00:00:00Z");
    const replaced = await store.set("alice", "API_KEY", `${API_KEY}-2`);
    expect(replaced).toEqual({ name: "API_KEY", createdAt: created.createdAt, updatedAt: now });

    const reopened = await open();
    expect(await reopened.valuesFor("alice", ["API_KEY", "MISSING"])).toEqual(new Map([["API_KEY", `${API_KEY}-2`]]));
    expect(await reopened.valuesFor("bob", ["API_KEY"])).toEqual(new Map([["API_KEY", TOKEN]]));
    expect(await reopened.valuesFor("carol", ["API_KEY"])).toEqual(new Map());
    expect(reopened.list("alice")).toEqual([{ name: "API_KEY", createdAt: new Date("2025-01-01T00:00:00Z"), updatedAt: now }]);

    const bytes = await readFile(storeFile());
    for (const value of [API_KEY, TOKEN, Buffer.from(API_KEY).toString("base64"), Buffer.from(TOKEN).toString("hex")]) {
      expect(bytes.includes(value)).toBe(false);
    }
  });

  it("deletes a secret, and answers NOT_FOUND for one the agent has not set", async () => {
    const store = await open();
    await store.set("alice", "API_KEY", API_KEY);
    await expect(store.delete("bob", "API_KEY")).rejects.toBeInstanceOf(NotFoundError);
    await store.delete("alice", "API_KEY");
    expect(store.list("alice")).toEqual([]);
    await expect(store.delete("alice", "API_KEY")).rejects.toThrow("no secret named API_KEY is set for agent alice");
    expect((await open()).list("alice")).toEqual([]);
  });

  it("refuses names and values that break the rules, naming the rule and never the value", async () => {
    const store = await open();
    for (const name of ["api_key", "1KEY", "", "A".repeat(65), "KEY-1"]) {
      await expect(store.set("alice", name, API_KEY)).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    await expect(store.set("alice", "SHORT", "abc")).rejects.toThrow(/value: is 3 bytes; a secret's value is at least 4 bytes/);
    await expect(store.set("alice", "BIG", "x".repeat(64 * 1024 + 1))).rejects.toThrow(/at most 65536 bytes/);
    await expect(store.set("alice", "NUL", "abc\0def")).rejects.toThrow(/NUL/);
    await store.set("alice", "EXACT", "x".repeat(64 * 1024));
    await store.set("alice", "FOUR", "é€"); // 5 bytes of UTF-8, 2 characters
    expect(store.list("alice").map((s) => s.name)).toEqual(["EXACT", "FOUR"]);
  });

  it("keeps at most 100 secrets an agent", async () => {
    const store = await open();
    for (let i = 0; i < MAX_SECRETS_PER_AGENT; i++) await store.set("alice", `KEY_${i}`, API_KEY);
    await expect(store.set("alice", "ONE_MORE", API_KEY)).rejects.toBeInstanceOf(ResourceExhaustedError);
    await store.set("alice", "KEY_0", TOKEN); // replacing one is not one more
    await store.set("bob", "ONE_MORE", API_KEY);
  });

  it("binds each entry to its agent and name: moved to another agent, it does not decrypt", async () => {
    const key = randomBytes(32);
    const sealed = seal(key, entryAad("alice", "API_KEY"), Buffer.from(API_KEY));
    expect(unseal(key, entryAad("alice", "API_KEY"), sealed)?.toString()).toBe(API_KEY);
    expect(unseal(key, entryAad("mallory", "API_KEY"), sealed)).toBeUndefined();
    expect(unseal(key, entryAad("alice", "OTHER"), sealed)).toBeUndefined();

    const store = await open();
    await store.set("alice", "API_KEY", API_KEY);
    await store.set("mallory", "OTHER", TOKEN);
    const json = JSON.parse(await readFile(storeFile(), "utf8")) as { secrets: Array<{ agent: string }> };
    const alices = json.secrets.find((entry) => entry.agent === "alice");
    if (alices) alices.agent = "mallory";
    await writeFile(storeFile(), JSON.stringify(json));
    const error = await refusal(open());
    expect(error).toBeInstanceOf(SecretsStoreError);
    expect(error.message).toContain("agent mallory's secret API_KEY does not decrypt");
    expect(error.message).toContain("changed outside the service");
  });

  it("refuses a tampered store: a changed byte, or a file that is not the store's JSON", async () => {
    const store = await open();
    await store.set("alice", "API_KEY", API_KEY);
    const original = await readFile(storeFile(), "utf8");
    const json = JSON.parse(original) as { secrets: Array<{ ciphertext: string }> };
    const entry = json.secrets[0];
    if (!entry) throw new Error("no entry written");
    const bytes = Buffer.from(entry.ciphertext, "base64");
    bytes[0] = (bytes[0] ?? 0) ^ 1;
    entry.ciphertext = bytes.toString("base64");
    await writeFile(storeFile(), JSON.stringify(json));
    expect((await refusal(open())).message).toContain("agent alice's secret API_KEY does not decrypt");

    await writeFile(storeFile(), original.slice(0, original.length / 2));
    expect((await refusal(open())).message).toMatch(/secrets store .* cannot be read \(it is not JSON\)/);
    await writeFile(storeFile(), JSON.stringify({ ...JSON.parse(original), cipher: "aes-128-cbc" }));
    expect(await refusal(open())).toBeInstanceOf(SecretsStoreError);
  });

  it("refuses a key that does not open the store, a missing key, and an unsafe or malformed key file, naming the setting", async () => {
    await (await open()).set("alice", "API_KEY", API_KEY);
    const original = await readFile(keyFile);

    await writeFile(keyFile, randomBytes(32), { mode: 0o600 });
    const wrong = await refusal(open());
    expect(wrong).toBeInstanceOf(SecretsStoreError);
    expect(wrong.message).toContain(`SKILL_ENGINE_SECRETS_KEY_FILE ${keyFile} does not open the secrets store`);

    await rm(keyFile);
    expect((await refusal(open())).message).toContain(`SKILL_ENGINE_SECRETS_KEY_FILE ${keyFile} does not exist, but the secrets store`);
    await expect(stat(keyFile)).rejects.toThrow(); // no new key made over an existing store

    await writeFile(keyFile, original, { mode: 0o600 });
    await chmod(keyFile, 0o640);
    expect((await refusal(open())).message).toContain(`SKILL_ENGINE_SECRETS_KEY_FILE ${keyFile}: has mode 0640`);
    await chmod(keyFile, 0o604);
    expect((await refusal(open())).message).toContain("chmod 600");

    await writeFile(keyFile, Buffer.concat([original, Buffer.from("\n")]), { mode: 0o600 });
    await chmod(keyFile, 0o600);
    expect((await refusal(open())).message).toContain(`SKILL_ENGINE_SECRETS_KEY_FILE ${keyFile}: is 33 bytes`);

    await writeFile(keyFile, original);
    expect(await (await open()).valuesFor("alice", ["API_KEY"])).toEqual(new Map([["API_KEY", API_KEY]]));
  });

  it("rotates the key: every value re-encrypted under a new key, the old key no longer opens the store", async () => {
    const store = await open();
    await store.set("alice", "API_KEY", API_KEY);
    await store.set("bob", "TOKEN", TOKEN);
    const oldKey = await readFile(keyFile);
    const oldStore = await readFile(storeFile(), "utf8");

    expect(await store.rotateKey()).toEqual({ rotated: 2 });
    const newKey = await readFile(keyFile);
    expect(newKey.equals(oldKey)).toBe(false);
    expect(newKey.length).toBe(32);
    expect(await mode(keyFile)).toBe(0o600);
    await expect(stat(nextKeyFile(keyFile))).rejects.toThrow();
    expect(await readFile(storeFile(), "utf8")).not.toBe(oldStore);
    // The running store goes on under the new key, and so does the next start.
    expect(await store.valuesFor("alice", ["API_KEY"])).toEqual(new Map([["API_KEY", API_KEY]]));
    await store.set("alice", "LATER", TOKEN);
    const reopened = await open();
    expect(await reopened.valuesFor("alice", ["API_KEY", "LATER"])).toEqual(
      new Map([
        ["API_KEY", API_KEY],
        ["LATER", TOKEN],
      ]),
    );
    expect(await reopened.valuesFor("bob", ["TOKEN"])).toEqual(new Map([["TOKEN", TOKEN]]));

    await writeFile(keyFile, oldKey);
    expect((await refusal(open())).message).toContain("does not open the secrets store");
  });

  it("survives a crash at each step of a rotation: the next start finds every value, under the old key or the new", async () => {
    const store = await open();
    await store.set("alice", "API_KEY", API_KEY);
    await store.set("bob", "TOKEN", TOKEN);
    const oldKey = await readFile(keyFile);
    // At each step, what is on disk is what a crash there leaves: copied into a home of its own.
    const crashed = new Map<RotationStep, string>();
    const snapshot = async (step: RotationStep): Promise<void> => {
      const copy = path.join(root, `crash-${step}`);
      await mkdir(copy, { mode: 0o700 });
      for (const name of await readdir(home)) await copyFile(path.join(home, name), path.join(copy, name));
      crashed.set(step, copy);
    };
    await SecretStore.open({ home, keyFile, onRotationStep: snapshot }).then((s) => s.rotateKey());
    const newKey = await readFile(keyFile);
    expect([...crashed.keys()]).toEqual(["next-key-written", "store-rewritten"]);

    for (const [step, copy] of crashed) {
      const copyKeyFile = path.join(copy, "secrets.key");
      expect((await readdir(copy)).sort()).toEqual(["secrets.json", "secrets.key", "secrets.key.next"]);
      const restarted = await open({ home: copy, keyFile: copyKeyFile });
      expect(await restarted.valuesFor("alice", ["API_KEY"])).toEqual(new Map([["API_KEY", API_KEY]]));
      expect(await restarted.valuesFor("bob", ["TOKEN"])).toEqual(new Map([["TOKEN", TOKEN]]));
      // Before the store's rewrite the rotation never happened; after it, the start finished it.
      expect((await readFile(copyKeyFile)).equals(step === "next-key-written" ? oldKey : newKey)).toBe(true);
      expect(await mode(copyKeyFile)).toBe(0o600);
      expect((await readdir(copy)).sort()).toEqual(["secrets.json", "secrets.key"]);
      // And the start after that one opens it as it is.
      expect(await (await open({ home: copy, keyFile: copyKeyFile })).valuesFor("alice", ["API_KEY"])).toEqual(
        new Map([["API_KEY", API_KEY]]),
      );
    }
    expect(store.list("alice").map((s) => s.name)).toEqual(["API_KEY"]);
  });

  it("serializes changes: concurrent sets all land", async () => {
    const store = await open();
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.set("alice", `KEY_${i}`, `${API_KEY}-${i}`)));
    const reopened = await open();
    expect(reopened.list("alice")).toHaveLength(20);
    expect(await reopened.valuesFor("alice", ["KEY_7"])).toEqual(new Map([["KEY_7", `${API_KEY}-7`]]));
  });

  it("creates the key in a directory of its own when SKILL_ENGINE_SECRETS_KEY_FILE names one", async () => {
    const elsewhere = path.join(root, "keys", "engine.key");
    await (await open({ keyFile: elsewhere })).set("alice", "API_KEY", API_KEY);
    expect(await mode(elsewhere)).toBe(0o600);
    expect(await mode(path.dirname(elsewhere))).toBe(0o700);
    expect(await (await open({ keyFile: elsewhere })).valuesFor("alice", ["API_KEY"])).toEqual(new Map([["API_KEY", API_KEY]]));
  });
});
