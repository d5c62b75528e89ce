import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmbeddingsTestServer } from "./support/embeddings-test-server.js";
import { connectPlaybook, type TestPlaybookClient } from "./support/playbook-client.js";
import { seedLibrary } from "./support/seeded-library.js";
import { makeDirs, rpcError, startTestEngine, type TestClient, type TestEngine } from "./support/test-engine.js";

/** More skills than the default page size (1000, docs/api.md#pagination). */
const LIBRARY = 1_050;
const skillName = (i: number): string => `skill_${String(i).padStart(4, "0")}`;
const SEEDED = Array.from({ length: LIBRARY }, (_, i) => skillName(i));
const DAY_MS = 86_400_000;

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
  let playbook: TestPlaybookClient;
  /** The playbook's clock: lessons' utility decays with it, and the lessons test moves it between pages. */
  let now = Date.now();

  const listSkills = (request: { pageSize?: number; pageToken?: string; includeInactive?: boolean }) =>
    client.call(client.raw.listSkills, { includeInactive: request.includeInactive ?? false, owner: "", ...request });

  beforeAll(async () => {
    embeddings = await EmbeddingsTestServer.start();
    const dirs = await makeDirs();
    folders = path.join(dirs.root, "folders");
    await mkdir(folders, { recursive: true });
    await seedLibrary(dirs.home, SEEDED);
    engine = await startTestEngine({
      dirs,
      env: {
        // Start-up indexes every skill for routing: a loopback embedder keeps that cheap.
        ...embeddings.serviceEnv(),
        SKILL_ENGINE_SKILL_DIRS: folders,
        SKILL_ENGINE_SKILL_WATCH: "off",
      },
      clock: () => now,
    });
    client = engine.client;
    playbook = connectPlaybook(engine.app.port);
  }, 300_000);

  afterAll(async () => {
    playbook?.close();
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

  it("pages ListLessons in one utility order, each lesson once, while days pass between the pages", async () => {
    const added: string[] = [];
    for (let i = 0; i < 12; i++) {
      // Older lessons more confident: as days pass, the newer ones' stale penalty catches up (docs/playbook.md#retention).
      const { lesson } = await playbook.add({
        trigger: `When handling lesson topic number ${i} of the paging walk`,
        correctPattern: `Apply remedy ${i} from the paging walk's notes.`,
        confidence: 0.9 - i * 0.03,
      });
      added.push(lesson?.id ?? "");
      now += 3 * DAY_MS;
    }
    const request = { scope: 0, domain: "", limit: 0, includeInactive: false, owner: "", pageSize: 5 };
    const walk: Array<{ id: string; utility: number }> = [];
    let token = "";
    let pages = 0;
    do {
      const page = await playbook.call(playbook.raw.listLessons, { ...request, pageToken: token });
      walk.push(...page.lessons.map((l) => ({ id: l.id, utility: l.utility })));
      token = page.nextPageToken;
      pages++;
      now += 4 * DAY_MS;
    } while (token !== "" && pages < 10);
    expect(pages).toBe(3);
    expect(walk.map((l) => l.id).sort()).toEqual([...added].sort());
    const utilities = walk.map((l) => l.utility);
    expect(utilities).toEqual([...utilities].sort((a, b) => b - a));
    // Time did reorder them: one page read now stands in another order.
    const again = await playbook.call(playbook.raw.listLessons, { ...request, pageSize: 50 });
    expect(again.lessons.map((l) => l.id)).not.toEqual(walk.map((l) => l.id));
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
