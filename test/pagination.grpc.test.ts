import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CanonicalStore, Composition, DEFAULT_HEALTH_POLICY, REGISTRY_FILE, SkillRegistry } from "../src/control/index.js";
import { contentHash } from "../src/control/store/index.js";
import { openRegistryDatabase } from "../src/sqlite/index.js";
import { EmbeddingsTestServer } from "./support/embeddings-test-server.js";
import { makeDirs, rpcError, startTestEngine, type TestClient, type TestEngine } from "./support/test-engine.js";

/** More skills than the default page size (1000, docs/api.md#pagination). */
const LIBRARY = 1_050;
const skillName = (i: number): string => `skill_${String(i).padStart(4, "0")}`;
const SEEDED = Array.from({ length: LIBRARY }, (_, i) => skillName(i));

/**
 * The commit half of a registration for each skill, without its sandboxed test run (as
 * bench/console.ts prepares its homes): history file, declaration, active file, registry version.
 */
async function seedLibrary(home: string): Promise<void> {
  await mkdir(home, { recursive: true, mode: 0o700 });
  const file = path.join(home, REGISTRY_FILE);
  const registry = SkillRegistry.open(file, DEFAULT_HEALTH_POLICY);
  const store = new CanonicalStore(home);
  await store.init();
  const db = openRegistryDatabase(file, { durable: false });
  const composition = new Composition(registry, store, db, { maxDepth: 4, composedSkillsPerAgent: 50 });
  for (const [i, name] of SEEDED.entries()) {
    const code = `import json\nprint(json.dumps({"n": ${i}}))\n`;
    await store.writeVersion(name, 1, code);
    await composition.record(name, 1, { kind: "plain", dependsOn: [] });
    const active = await store.prepareActive(name, code);
    registry.commitVersion(
      {
        name,
        version: 1,
        description: `synthetic skill number ${i}`,
        parametersSchema: '{"type":"object"}',
        testPayload: "{}",
        contentHash: contentHash(code),
        origin: "register",
        createdAt: new Date(),
      },
      { owner: "local", visibility: "private" },
    );
    await active.commit();
  }
  db.close();
  registry.close();
}

/** An instructions-only skill folder: registered by a rescan without any sandbox run. */
async function writeFolder(root: string, folder: string, name: string): Promise<void> {
  await mkdir(path.join(root, folder), { recursive: true });
  await writeFile(path.join(root, folder, "SKILL.md"), `---\nname: ${name}\ndescription: Steps for ${name}.\n---\nDo it.\n`);
}

describe("pagination through the real server (docs/api.md#pagination)", () => {
  let embeddings: EmbeddingsTestServer;
  let engine: TestEngine;
  let client: TestClient;
  let folders: string;

  const listSkills = (request: { pageSize?: number; pageToken?: string; includeInactive?: boolean }) =>
    client.call(client.raw.listSkills, { includeInactive: request.includeInactive ?? false, owner: "", ...request });

  beforeAll(async () => {
    embeddings = await EmbeddingsTestServer.start();
    const dirs = await makeDirs();
    folders = path.join(dirs.root, "folders");
    await mkdir(folders, { recursive: true });
    await seedLibrary(dirs.home);
    engine = await startTestEngine({
      dirs,
      env: {
        // Start-up indexes every skill for routing: a loopback embedder keeps that cheap.
        SKILL_ENGINE_EMBEDDER: "openai",
        EMBEDDING_BASE_URL: embeddings.baseUrl,
        EMBEDDING_MODEL: "stub",
        EMBEDDING_DIMENSIONS: "8",
        SKILL_ENGINE_SKILL_DIRS: folders,
        SKILL_ENGINE_SKILL_WATCH: "off",
      },
    });
    client = engine.client;
  }, 300_000);

  afterAll(async () => {
    await engine?.dispose();
    await embeddings?.stop();
  });

  it("answers a client that sends no page size with the default page, and the rest on the next page", async () => {
    const first = await listSkills({});
    expect(first.skills).toHaveLength(1_000);
    expect(first.nextPageToken).not.toBe("");
    const second = await listSkills({ pageToken: first.nextPageToken });
    expect(second.nextPageToken).toBe("");
    expect([...first.skills, ...second.skills].map((s) => s.name)).toEqual(SEEDED);
    // Larger than the maximum is clamped to it.
    expect((await listSkills({ pageSize: 5_000 })).skills).toHaveLength(1_000);
  });

  it("sees every skill that exists throughout exactly once, with skills added and removed between pages", async () => {
    const seen: string[] = [];
    let page = await listSkills({ pageSize: 100 });
    seen.push(...page.skills.map((s) => s.name));
    expect(seen.at(-1)).toBe("skill_0099");

    // Between the pages: one skill removed behind the cursor and one ahead of it; one added
    // behind it and one ahead of it (instructions-only folders, registered by a rescan).
    await client.call(client.raw.deleteSkill, { name: "skill_0050", force: false });
    await client.call(client.raw.deleteSkill, { name: "skill_0600", force: false });
    await writeFolder(folders, "behind", "skill_0000a");
    await writeFolder(folders, "ahead", "skill_0500a");
    const rescan = await client.call(client.raw.rescanSkillDirs, {});
    expect(rescan.registered.sort()).toEqual(["skill_0000a", "skill_0500a"]);

    let pages = 1;
    while (page.nextPageToken !== "") {
      page = await listSkills({ pageSize: 100, pageToken: page.nextPageToken });
      seen.push(...page.skills.map((s) => s.name));
      pages++;
    }
    expect(new Set(seen).size).toBe(seen.length);
    const throughout = SEEDED.filter((name) => name !== "skill_0050" && name !== "skill_0600");
    for (const name of throughout) expect(seen).toContain(name);
    // Ahead of the cursor: the added skill is listed, the removed one is not.
    expect(seen).toContain("skill_0500a");
    expect(seen).not.toContain("skill_0600");
    // Behind it: what was already shown stays shown once, what arrived there is not.
    expect(seen).toContain("skill_0050");
    expect(seen).not.toContain("skill_0000a");
    expect(seen).toEqual([...seen].sort());
    expect(pages).toBe(11);
  });

  it("pages GetCatalog through the skills, then the folders that are no skill's ready source", async () => {
    await writeFolder(folders, "zz_shadow", "skill_0500a");
    await client.call(client.raw.rescanSkillDirs, {});
    const entries: Array<{ name: string; folder: string }> = [];
    let token = "";
    do {
      const page = await client.call(client.raw.getCatalog, { pageSize: 300, pageToken: token });
      expect(page.skills.length).toBeLessThanOrEqual(300);
      entries.push(...page.skills.map((s) => ({ name: s.name, folder: s.sourceFolder })));
      token = page.nextPageToken;
    } while (token !== "");
    const every: string[] = [];
    token = "";
    do {
      const page = await listSkills({ includeInactive: true, pageToken: token });
      every.push(...page.skills.map((s) => s.name));
      token = page.nextPageToken;
    } while (token !== "");
    // Every skill once, by name; then the shadowed folder, a row of its own.
    expect(entries.slice(0, every.length).map((e) => e.name)).toEqual(every);
    expect(entries.slice(every.length)).toEqual([{ name: "skill_0500a", folder: expect.stringContaining("zz_shadow") as string }]);

    const sources: string[] = [];
    token = "";
    do {
      const page = await client.call(client.raw.listSkillSources, { pageSize: 1, pageToken: token });
      expect(page.directories).toEqual([folders]);
      sources.push(...page.sources.map((s) => s.sourceFolder));
      token = page.nextPageToken;
    } while (token !== "");
    expect(sources.map((f) => path.basename(f))).toEqual(["ahead", "behind", "zz_shadow"]);
  });

  it("pages grants and secrets, each item once", async () => {
    for (const agent of ["carol", "alice", "bob"]) {
      await client.call(client.raw.grantSkill, { name: "skill_0001", granteeAgent: agent, granteeUser: "", version: 0 });
    }
    const first = await client.call(client.raw.listGrants, { name: "skill_0001", pageSize: 2 });
    const second = await client.call(client.raw.listGrants, { name: "skill_0001", pageSize: 2, pageToken: first.nextPageToken });
    expect([...first.grants, ...second.grants].map((g) => g.granteeAgent)).toEqual(["alice", "bob", "carol"]);
    expect(second.nextPageToken).toBe("");

    for (const name of ["C_KEY", "A_KEY", "B_KEY"]) await client.call(client.raw.setSecret, { name, value: "value-of-a-test-secret" });
    const secrets = await client.call(client.raw.listSecrets, { pageSize: 2 });
    const more = await client.call(client.raw.listSecrets, { pageSize: 2, pageToken: secrets.nextPageToken });
    expect([...secrets.secrets, ...more.secrets].map((s) => s.name)).toEqual(["A_KEY", "B_KEY", "C_KEY"]);
    expect(more.nextPageToken).toBe("");
  });

  it("refuses a bad page size, a token that is no token, one reused with other filters and one of another listing", async () => {
    const negative = await rpcError(listSkills({ pageSize: -1 }));
    expect(negative.code).toBe(status.INVALID_ARGUMENT);
    expect(negative.details).toMatch(/^page_size: must be ≥ 0/);

    const garbage = await rpcError(listSkills({ pageToken: "not-a-token" }));
    expect(garbage.code).toBe(status.INVALID_ARGUMENT);
    expect(garbage.details).toMatch(/^page_token: is not a page token of ListSkills .*leave page_token empty to start from the first page/);

    const { nextPageToken } = await listSkills({ pageSize: 10 });
    const otherFilters = await rpcError(listSkills({ pageSize: 10, pageToken: nextPageToken, includeInactive: true }));
    expect(otherFilters.code).toBe(status.INVALID_ARGUMENT);
    expect(otherFilters.details).toMatch(/^page_token: was issued for ListSkills with other filters \(include_inactive, owner\)/);

    const otherListing = await rpcError(client.call(client.raw.getCatalog, { pageToken: nextPageToken }));
    expect(otherListing.code).toBe(status.INVALID_ARGUMENT);
    expect(otherListing.details).toContain("issued by ListSkills");

    const otherSkill = (await client.call(client.raw.listGrants, { name: "skill_0001", pageSize: 1 })).nextPageToken;
    const reused = await rpcError(client.call(client.raw.listGrants, { name: "skill_0002", pageToken: otherSkill }));
    expect(reused.code).toBe(status.INVALID_ARGUMENT);

    for (const call of [
      client.call(client.raw.listCandidates, { status: 0, pageToken: "x" }),
      client.call(client.raw.listEnvironments, { pageToken: "x" }),
      client.call(client.raw.listSkillVersions, { name: "skill_0001", pageToken: "x" }),
      client.call(client.raw.listSkillEvolution, { name: "skill_0001", pageToken: "x" }),
    ]) {
      expect((await rpcError(call)).code).toBe(status.INVALID_ARGUMENT);
    }
    // Short listings fit one page: no token.
    expect((await client.call(client.raw.listSkillVersions, { name: "skill_0001", pageSize: 1 })).nextPageToken).toBe("");
  });
});
