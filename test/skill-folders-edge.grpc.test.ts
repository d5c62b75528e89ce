import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CatalogStatus } from "../src/gen/skillengine/v1/composition.js";
import { makeDirs, startTestEngine, type TestEngine } from "./support/test-engine.js";

const skillMd = (name: string): string => `---\nname: ${name}\ndescription: Tips about ${name.replace(/_/g, " ")}.\n---\nBe brief.\n`;

/** Folder edge cases through the real server (docs/skill-sources.md#identity, #safety): instructions folders, no sandbox run. */
describe("skill folders: a broken .skill_id is repaired, a linked folder is reported blocked", () => {
  let root: string;
  let skills: string;
  let engine: TestEngine;

  const scan = async () => {
    const scanned = await engine.client.call(engine.client.raw.rescanSkillDirs, {}, 120_000);
    return Object.fromEntries(scanned.sources.map((s) => [path.basename(s.sourceFolder), s]));
  };
  const sidecar = (folder: string): Promise<string> => readFile(path.join(skills, folder, ".skill_id"), "utf8");

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "skill-folders-edge-"));
    skills = path.join(root, "skills");
    await mkdir(path.join(skills, "tips"), { recursive: true });
    await writeFile(path.join(skills, "tips", "SKILL.md"), skillMd("commit_tips"));
    // A skill folder kept elsewhere, linked into the directory.
    await mkdir(path.join(root, "elsewhere", "linked"), { recursive: true });
    await writeFile(path.join(root, "elsewhere", "linked", "SKILL.md"), skillMd("linked_tips"));
    await symlink(path.join(root, "elsewhere", "linked"), path.join(skills, "linked"));
    // A link to a plain file is not a skill folder: left out, as a plain file is.
    await writeFile(path.join(root, "notes.txt"), "not a skill\n");
    await symlink(path.join(root, "notes.txt"), path.join(skills, "notes"));
    engine = await startTestEngine({ dirs: await makeDirs(), env: { SKILL_ENGINE_SKILL_DIRS: skills, SKILL_ENGINE_SKILL_WATCH: "off" } });
  });
  afterAll(async () => {
    await engine?.dispose();
    await rm(root, { recursive: true, force: true });
  });

  it("writes a new id over an empty sidecar of a new folder and says so", async () => {
    // A new folder with an empty sidecar (a template copied with its file, say).
    await mkdir(path.join(skills, "fresh"));
    await writeFile(path.join(skills, "fresh", "SKILL.md"), skillMd("naming_tips"));
    await writeFile(path.join(skills, "fresh", ".skill_id"), "");
    const fresh = (await scan()).fresh;
    expect(fresh).toMatchObject({ name: "naming_tips", status: CatalogStatus.CATALOG_STATUS_READY });
    expect(fresh?.skillId).toMatch(/^naming_tips__imp_[0-9a-f]{8}$/);
    expect(fresh?.reason).toBe(`repaired .skill_id: it was empty; wrote ${fresh?.skillId}`);
    expect((await sidecar("fresh")).trim()).toBe(fresh?.skillId);
  });

  it("puts the registry's id back into an emptied or garbled sidecar, without a new version", async () => {
    const first = (await scan()).tips;
    const id = first?.skillId ?? "";
    expect(id).toMatch(/^commit_tips__imp_[0-9a-f]{8}$/);
    await writeFile(path.join(skills, "tips", ".skill_id"), "\n");
    const emptied = (await scan()).tips;
    expect(emptied).toMatchObject({ skillId: id, version: 1, reason: `repaired .skill_id: it was empty; wrote ${id}` });
    expect((await sidecar("tips")).trim()).toBe(id);
    await writeFile(path.join(skills, "tips", ".skill_id"), "not an id!\n");
    const garbled = (await scan()).tips;
    expect(garbled).toMatchObject({
      skillId: id,
      version: 1,
      reason: `repaired .skill_id: it held no valid id ("not an id!"); wrote ${id}`,
    });
    // Repaired once: the next scan finds a good sidecar and has nothing to say.
    expect((await scan()).tips).toMatchObject({ skillId: id, reason: "" });
  });

  it("reports a symbolically linked skill folder as blocked, naming the link, and registers nothing from it", async () => {
    const byFolder = await scan();
    expect(byFolder.linked).toMatchObject({
      status: CatalogStatus.CATALOG_STATUS_BLOCKED,
      name: "",
      reason: `linked is a symbolic link (to ${path.join(root, "elsewhere", "linked")}); skill folders are never followed through links: put the folder itself in ${skills}`,
    });
    expect(byFolder.notes).toBeUndefined();
    expect((await engine.client.list(true)).skills.map((s) => s.name)).not.toContain("linked_tips");
  });
});
