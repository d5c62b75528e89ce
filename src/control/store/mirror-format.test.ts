import { readdirSync, statSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_HEALTH_POLICY, type SkillRecord, SkillRegistry } from "../registry/index.js";
import { ReplyScope } from "../../reply-scope/index.js";
import {
  CanonicalStore,
  MIRROR_FILE,
  MIRROR_FORMAT,
  MirrorDocumentSchema,
  MirrorWriter,
  readMirrorDocument,
  TEMP_FILE_PREFIX,
} from "./index.js";

describe("skills_registry.json: one schema to write it and to read it back (real SQLite file, real directory)", () => {
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
    return JSON.parse(await readFile(path.join(store.directory, MIRROR_FILE), "utf8")) as unknown;
  }

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

  it("a rewrite holds one skill's entry at a time, not the whole history, and writes the document's exact JSON text", async () => {
    // Three skills whose entries are each larger than what the file's writer gathers before a
    // write (64 KiB): by the time the third skill's versions are read, the first two entries must
    // be in the file already. Built whole first, no byte was written before every skill was read.
    const long = "x".repeat(1_500);
    for (const name of ["alpha", "beta", "gamma"]) {
      for (let version = 1; version <= 50; version++) {
        commit(name, version, new Date(Date.UTC(2025, 0, 1, 0, version)), "private", `${name} v${version} ${long}`);
      }
    }
    const mirrorFile = path.join(store.directory, MIRROR_FILE);
    const writtenSoFar = (): number => {
      const temp = readdirSync(store.directory).find((file) => file.startsWith(`${TEMP_FILE_PREFIX}${MIRROR_FILE}`));
      return temp === undefined ? -1 : statSync(path.join(store.directory, temp)).size;
    };
    const readVersions = registry.versions.bind(registry);
    const bytesWhenRead = new Map<string, number>();
    vi.spyOn(registry, "versions").mockImplementation((name) => {
      bytesWhenRead.set(name, writtenSoFar());
      return readVersions(name);
    });

    const writer = new MirrorWriter(registry, store, pino({ level: "silent" }));
    await writer.flush();
    await writer.close();

    const text = await readFile(mirrorFile, "utf8");
    const entryBytes = (text.length - 100) / 3;
    expect(entryBytes).toBeGreaterThan(64 * 1024);
    expect(bytesWhenRead.get("gamma")).toBeGreaterThanOrEqual(entryBytes);
    expect(text).toBe(`${JSON.stringify(JSON.parse(text), null, 2)}\n`);
    expect(MirrorDocumentSchema.parse(JSON.parse(text)).skills.map((s) => [s.name, s.versions.length])).toEqual([
      ["alpha", 50],
      ["beta", 50],
      ["gamma", 50],
    ]);
  });

  it("an empty registry's mirror is the empty document's JSON text", async () => {
    const writer = new MirrorWriter(registry, store, pino({ level: "silent" }));
    await writer.flush();
    await writer.close();
    const text = await readFile(path.join(store.directory, MIRROR_FILE), "utf8");
    expect(text).toBe(`${JSON.stringify({ format: MIRROR_FORMAT, skills: [] }, null, 2)}\n`);
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
    const mirrorFile = path.join(store.directory, MIRROR_FILE);
    const writer = new MirrorWriter(registry, store, pino({ level: "silent" }));
    commit("parse_csv", 1, new Date("2025-01-01T00:00:00.000Z"));
    const call = new ReplyScope();
    call.run(() => writer.flushAfterReply());
    await new Promise((resolve) => setTimeout(resolve, 20));
    await expect(readFile(mirrorFile, "utf8")).rejects.toThrow(/ENOENT/);

    // The service stops before the call's reply went out: close() writes what was due.
    await writer.close();
    expect(MirrorDocumentSchema.parse(JSON.parse(await readFile(mirrorFile, "utf8"))).skills.map((s) => s.name)).toEqual(["parse_csv"]);
    call.settle();
  });
});
