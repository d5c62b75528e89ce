import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_HEALTH_POLICY, type SkillRecord, SkillRegistry } from "../registry/index.js";
import { ReplyScope } from "../../reply-scope/index.js";
import {
  CanonicalStore,
  LEGACY_MIRROR_FILE,
  MIRROR_DIR,
  MIRROR_FORMAT,
  MirrorDocumentSchema,
  MirrorEntrySchema,
  MirrorWriter,
  readMirrorDocument,
} from "./index.js";

describe("the registry mirror: a file per skill, one schema to write it and to read it back (real SQLite file, real directory)", () => {
  let home: string;
  let registry: SkillRegistry;
  let store: CanonicalStore;

  beforeEach(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), "mirror-format-test-"));
    registry = SkillRegistry.open(path.join(home, "registry.db"), DEFAULT_HEALTH_POLICY);
    store = new CanonicalStore(home);
    await store.init();
  });

  afterEach(async () => {
    registry.close();
    await rm(home, { recursive: true, force: true });
  });

  function commit(
    name: string,
    version: number,
    at: Date,
    visibility: "private" | "public" = "private",
    description = `${name} v${version}`,
  ): SkillRecord {
    return registry.commitVersion(
      {
        name,
        version,
        description,
        parametersSchema: '{"type":"object","properties":{"x":{"type":"integer"}}}',
        testPayload: '{"x":1}',
        contentHash: String(version).repeat(64).slice(0, 64),
        origin: version === 1 ? "register" : "patch",
        createdAt: at,
      },
      { owner: "agent-7", visibility },
    );
  }

  async function writtenMirror(): Promise<unknown> {
    const writer = new MirrorWriter(registry, store, pino({ level: "silent" }));
    await writer.flush();
    await writer.close();
    return (await store.mirror.read()).document;
  }

  const fileOf = (name: string): string => path.join(store.directory, MIRROR_DIR, `${name}.json`);

  it("writes exactly the strict schema, and reads every field back as the registry holds it", async () => {
    commit("parse_csv", 1, new Date("2025-01-01T00:00:00.000Z"));
    commit("parse_csv", 2, new Date("2025-01-02T00:00:00.000Z"), "public");
    registry.recordInvocation({
      name: "parse_csv",
      version: 2,
      at: new Date("2025-01-03T00:00:00.000Z"),
      success: true,
      durationMs: 10,
      exitCode: 0,
      timedOut: false,
      oomKilled: false,
      errorSummary: "",
      caller: "agent-7",
    });
    registry.setProtected("parse_csv", true, new Date("2025-01-04T00:00:00.000Z"));
    const record = registry.get("parse_csv") as SkillRecord;

    const document = await writtenMirror();
    const strict = MirrorDocumentSchema.parse(document);
    expect(strict.format).toBe(MIRROR_FORMAT);
    expect(strict.skills.map((s) => s.name)).toEqual(["parse_csv"]);

    const reading = readMirrorDocument(document);
    expect(reading.problems).toEqual([]);
    expect(reading.skills.get("parse_csv")).toEqual({
      name: "parse_csv",
      description: record.description,
      parametersSchema: JSON.stringify(JSON.parse(record.parametersSchema)),
      status: record.status,
      statusReason: record.statusReason,
      version: 2,
      contentHash: record.contentHash,
      usageCount: 1,
      failureCount: 0,
      protected: true,
      autoCreated: false,
      createdAt: record.createdAt,
      lastInvokedAt: new Date("2025-01-03T00:00:00.000Z"),
      owner: "agent-7",
      visibility: "public",
      system: false,
      enabled: true,
      disabledBy: "",
      grants: [],
      versions: registry.versions("parse_csv").map((v) => ({
        version: v.version,
        contentHash: v.contentHash,
        description: v.description,
        parametersSchema: v.parametersSchema,
        testPayload: v.testPayload,
        origin: v.origin,
        createdAt: v.createdAt,
      })),
    });
  });

  it("records a version's declared packages, so rebuild-registry brings them back (docs/packages.md)", async () => {
    commit("plain_one", 1, new Date("2025-01-01T00:00:00.000Z"));
    const packages = {
      requirements: ["pyyaml==6.0.1"],
      systemPackages: ["python3-numpy"],
      environmentId: "0123456789abcdef0123456789abcdef",
    };
    registry.commitVersion(
      {
        name: "needs_yaml",
        version: 1,
        description: "reads YAML",
        parametersSchema: '{"type":"object"}',
        testPayload: "{}",
        contentHash: "a".repeat(64),
        origin: "register",
        createdAt: new Date("2025-01-02T00:00:00.000Z"),
        packages,
      },
      { owner: "agent-7", visibility: "private" },
    );
    const document = await writtenMirror();
    MirrorDocumentSchema.parse(document);
    const reading = readMirrorDocument(document);
    expect(reading.skills.get("needs_yaml")?.versions.map((v) => v.packages)).toEqual([packages]);
    expect(reading.skills.get("plain_one")?.versions.map((v) => v.packages)).toEqual([undefined]);
    // A plain version's entry is exactly as before packages existed.
    expect(Object.keys((document as { skills: Array<{ versions: object[] }> }).skills[1]?.versions[0] ?? {})).not.toContain("requirements");
  });

  it("records a version's secret names (never values) and reads them back; rollbacks keep each version's own", async () => {
    const version = (n: number, secrets?: string[]): void => {
      registry.commitVersion(
        {
          name: "calls_api",
          version: n,
          description: "calls an API",
          parametersSchema: '{"type":"object"}',
          testPayload: "{}",
          contentHash: String(n).repeat(64),
          origin: n === 1 ? "register" : "patch",
          createdAt: new Date(Date.UTC(2025, 0, n)),
          ...(secrets ? { secrets } : {}),
        },
        { owner: "agent-7", visibility: "private" },
      );
    };
    version(1, ["WEATHER_API_KEY"]);
    version(2, ["WEATHER_API_KEY", "GEO_TOKEN"]);
    version(3);
    expect(registry.get("calls_api")?.secrets).toEqual([]);
    expect(registry.activateVersion("calls_api", 2, new Date()).secrets).toEqual(["WEATHER_API_KEY", "GEO_TOKEN"]);
    const document = await writtenMirror();
    MirrorDocumentSchema.parse(document);
    const versions = readMirrorDocument(document).skills.get("calls_api")?.versions;
    expect(versions?.map((v) => v.secrets)).toEqual([["WEATHER_API_KEY"], ["WEATHER_API_KEY", "GEO_TOKEN"], undefined]);
    // A hand-edited name that is not one reads as nothing, never as a name no agent could set.
    const edited = JSON.parse(JSON.stringify(document).replace('"GEO_TOKEN"', '"geo token"')) as unknown;
    expect(readMirrorDocument(edited).skills.get("calls_api")?.versions[1]?.secrets).toBeUndefined();
  });

  it("records a version's declared hosts and reads them back; rollbacks keep each version's own", async () => {
    const version = (n: number, networkAllow?: string[]): void => {
      registry.commitVersion(
        {
          name: "fetches",
          version: n,
          description: "fetches a page",
          parametersSchema: '{"type":"object"}',
          testPayload: "{}",
          contentHash: String(n).repeat(64),
          origin: n === 1 ? "register" : "patch",
          createdAt: new Date(Date.UTC(2025, 0, n)),
          ...(networkAllow ? { networkAllow } : {}),
        },
        { owner: "agent-7", visibility: "private" },
      );
    };
    version(1, ["api.example.com"]);
    version(2, ["api.example.com", "*.cdn.example.net:8443"]);
    version(3);
    expect(registry.get("fetches")?.networkAllow).toEqual([]);
    expect(registry.activateVersion("fetches", 2, new Date()).networkAllow).toEqual(["api.example.com", "*.cdn.example.net:8443"]);
    expect(registry.version("fetches", 1)?.networkAllow).toEqual(["api.example.com"]);
    const document = await writtenMirror();
    MirrorDocumentSchema.parse(document);
    const versions = readMirrorDocument(document).skills.get("fetches")?.versions;
    expect(versions?.map((v) => v.networkAllow)).toEqual([["api.example.com"], ["api.example.com", "*.cdn.example.net:8443"], undefined]);
    // A version that declares none is written as before hosts existed.
    expect(JSON.stringify(document)).not.toContain('"network_allow":[]');
  });

  it("each skill's file is its entry's exact JSON text; a write rewrites only the files of skills that changed", async () => {
    for (const name of ["alpha", "beta", "gamma"]) commit(name, 1, new Date("2025-01-01T00:00:00.000Z"));
    const writer = new MirrorWriter(registry, store, pino({ level: "silent" }));
    await writer.flush();
    const text = await readFile(fileOf("beta"), "utf8");
    expect(text).toBe(`${JSON.stringify(JSON.parse(text), null, 2)}\n`);
    expect(MirrorEntrySchema.parse((JSON.parse(text) as { skill: unknown }).skill).name).toBe("beta");
    expect((JSON.parse(text) as { format: unknown }).format).toBe(MIRROR_FORMAT);

    const written = vi.spyOn(store.mirror, "write");
    registry.setProtected("beta", true, new Date("2025-01-02T00:00:00.000Z"));
    await writer.flush();
    expect(written.mock.calls.map(([name]) => name)).toEqual(["beta"]);
    expect((JSON.parse(await readFile(fileOf("beta"), "utf8")) as { skill: { protected: boolean } }).skill.protected).toBe(true);

    written.mockClear();
    await writer.flush();
    expect(written).not.toHaveBeenCalled();
    await writer.close();
  });

  it("marks a skill for every change an entry shows, whoever writes it, and not for a column it does not show", async () => {
    commit("alpha", 1, new Date("2025-01-01T00:00:00.000Z"));
    const writer = new MirrorWriter(registry, store, pino({ level: "silent" }));
    await writer.flush();
    expect(registry.pendingMirrorChanges(10)).toEqual([]);
    const other = new Database(path.join(home, "registry.db"));
    try {
      other.prepare("UPDATE skills SET health_warning = 'slow' WHERE name = 'alpha'").run();
      expect(registry.pendingMirrorChanges(10)).toEqual([]);
      other.prepare("UPDATE skills SET description = 'edited by hand' WHERE name = 'alpha'").run();
      expect(registry.pendingMirrorChanges(10).map((c) => c.name)).toEqual(["alpha"]);
    } finally {
      other.close();
    }
    await writer.flush();
    await writer.close();
    expect((JSON.parse(await readFile(fileOf("alpha"), "utf8")) as { skill: { description: string } }).skill.description).toBe(
      "edited by hand",
    );
  });

  it("a change made while its skill's file is being written is written again by the next write", async () => {
    commit("alpha", 1, new Date("2025-01-01T00:00:00.000Z"));
    const writer = new MirrorWriter(registry, store, pino({ level: "silent" }));
    const write = store.mirror.write.bind(store.mirror);
    let changedDuringWrite = false;
    vi.spyOn(store.mirror, "write").mockImplementation(async (name, entry) => {
      await write(name, entry);
      if (!changedDuringWrite) {
        changedDuringWrite = true;
        registry.setProtected("alpha", true, new Date("2025-01-02T00:00:00.000Z"));
      }
    });
    await writer.flush();
    expect((JSON.parse(await readFile(fileOf("alpha"), "utf8")) as { skill: { protected: boolean } }).skill.protected).toBe(false);
    await writer.flush();
    expect((JSON.parse(await readFile(fileOf("alpha"), "utf8")) as { skill: { protected: boolean } }).skill.protected).toBe(true);
    await writer.close();
  });

  it("a change the service stopped before writing is written at the next start (the outbox is in registry.db)", async () => {
    commit("alpha", 1, new Date("2025-01-01T00:00:00.000Z"));
    registry.close();
    registry = SkillRegistry.open(path.join(home, "registry.db"), DEFAULT_HEALTH_POLICY);
    expect(existsSync(fileOf("alpha"))).toBe(false);
    const writer = new MirrorWriter(registry, store, pino({ level: "silent" }));
    await writer.flush();
    await writer.close();
    expect(existsSync(fileOf("alpha"))).toBe(true);
  });

  it("reads an older home's whole skills_registry.json under the per-skill files, and removes it once every skill has its file", async () => {
    commit("alpha", 1, new Date("2025-01-01T00:00:00.000Z"));
    const legacy = path.join(store.directory, LEGACY_MIRROR_FILE);
    const sample = MirrorDocumentSchema.parse(await writtenMirror()).skills[0];
    const entry = (name: string, usage: number): unknown => ({ ...sample, name, usage_count: usage });
    await writeFile(legacy, JSON.stringify({ format: 1, skills: [entry("alpha", 7), entry("beta", 9)] }));
    const reading = readMirrorDocument((await store.mirror.read()).document);
    expect(reading.skills.get("alpha")?.usageCount).toBe(0);
    expect(reading.skills.get("beta")?.usageCount).toBe(9);

    registry.markWholeMirror();
    const writer = new MirrorWriter(registry, store, pino({ level: "silent" }));
    await writer.flush();
    await writer.close();
    expect(existsSync(legacy)).toBe(false);
  });

  it("an empty registry's mirror is an empty document", async () => {
    expect(await writtenMirror()).toEqual({ format: MIRROR_FORMAT, skills: [] });
  });

  it("reads a damaged file field by field: a bad field costs that field, a nameless entry or numberless version is left out", () => {
    const reading = readMirrorDocument({
      format: 7,
      skills: [
        {
          name: "echo",
          description: 42,
          parameters_schema: '{"type":"object"}',
          status: "zombie",
          usage_count: -3,
          failure_count: 2,
          protected: "yes",
          created_at: "yesterday",
          last_invoked_at: null,
          owner: "not a valid agent id!",
          visibility: "public",
          versions: [{ version: "one" }, { version: 3, content_hash: "abc", origin: "teleported", created_at: "2025-02-01T00:00:00Z" }],
        },
        { description: "no name" },
        "not even an object",
      ],
    });
    expect(reading.problems).toEqual(["has format 7, expected 1; read as far as it matches", "has 2 entries without a name; ignored"]);
    expect([...reading.skills.keys()]).toEqual(["echo"]);
    expect(reading.skills.get("echo")).toMatchObject({
      description: undefined,
      parametersSchema: '{"type":"object"}',
      status: undefined,
      usageCount: undefined,
      failureCount: 2,
      protected: undefined,
      createdAt: undefined,
      lastInvokedAt: undefined,
      owner: undefined,
      visibility: "public",
      versions: [{ version: 3, contentHash: "abc", origin: undefined, createdAt: new Date("2025-02-01T00:00:00Z") }],
    });
  });

  it("says so when there is no skills list at all", () => {
    expect(readMirrorDocument({ format: 1 }).problems).toEqual([
      'has no "skills" list; descriptions, schemas, counters and statuses get defaults',
    ]);
    expect(readMirrorDocument([1, 2]).skills.size).toBe(0);
  });

  it("a rewrite asked for after the reply waits for the call's reply, and a stop before it still writes it", async () => {
    const mirrorFile = fileOf("parse_csv");
    const writer = new MirrorWriter(registry, store, pino({ level: "silent" }));
    commit("parse_csv", 1, new Date("2025-01-01T00:00:00.000Z"));
    const call = new ReplyScope();
    call.run(() => writer.flushAfterReply());
    await new Promise((resolve) => setTimeout(resolve, 20));
    await expect(readFile(mirrorFile, "utf8")).rejects.toThrow(/ENOENT/);

    // The service stops before the call's reply went out: close() writes what was due.
    await writer.close();
    expect(MirrorEntrySchema.parse((JSON.parse(await readFile(mirrorFile, "utf8")) as { skill: unknown }).skill).name).toBe("parse_csv");
    call.settle();
  });
});
