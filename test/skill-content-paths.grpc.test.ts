import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEngine, type TestEngine } from "./support/test-engine.js";

const SKILL_MD = `---
name: release_notes
description: How to write the notes of a release.
---
Read {baseDir}/references/style.md first, then fill in {baseDir}/templates/notes.md.
Everything this skill needs is in its folder ({baseDir}).
`;

/**
 * GetSkillContent names no path on the service's host (docs/skill-sources.md#progressive-disclosure):
 * `base_dir` is the skill's own folder, ".", and `{baseDir}` in the body becomes a path relative to
 * it, the one GetSkillFile takes. An instructions-only folder: no sandbox run.
 */
describe("GetSkillContent: paths relative to the skill, never the host's", () => {
  let engine: TestEngine;
  let dir: string;
  let skills: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "skill-content-paths-"));
    skills = path.join(dir, "skills");
    await mkdir(path.join(skills, "notes", "references"), { recursive: true });
    await mkdir(path.join(skills, "notes", "templates"), { recursive: true });
    await writeFile(path.join(skills, "notes", "SKILL.md"), SKILL_MD);
    await writeFile(path.join(skills, "notes", "references", "style.md"), "Short sentences.\n");
    await writeFile(path.join(skills, "notes", "templates", "notes.md"), "## Changes\n");
    engine = await startTestEngine({ env: { SKILL_ENGINE_SKILL_DIRS: skills, SKILL_ENGINE_SKILL_WATCH: "off" } });
    await engine.client.call(engine.client.raw.rescanSkillDirs, {});
  }, 120_000);

  afterAll(async () => {
    await engine?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it("answers base_dir '.' and a body whose paths GetSkillFile takes as they are", async () => {
    const content = await engine.client.call(engine.client.raw.getSkillContent, { name: "release_notes", skillId: "" });
    expect(content.baseDir).toBe(".");
    expect(path.isAbsolute(content.baseDir)).toBe(false);
    expect(content.body).toBe(
      "Read references/style.md first, then fill in templates/notes.md.\nEverything this skill needs is in its folder (.).\n",
    );
    // Neither the canonical store (under the home) nor the discovery directory shows through.
    for (const hostPath of [engine.home, skills, dir]) {
      expect(content.body).not.toContain(hostPath);
      expect(content.baseDir).not.toContain(hostPath);
    }
    expect(content.files.map((f) => f.path)).toEqual(["SKILL.md", "references/style.md", "templates/notes.md"]);

    const style = await engine.client.call(engine.client.raw.getSkillFile, {
      name: "release_notes",
      skillId: "",
      path: "references/style.md",
    });
    expect(Buffer.from(style.content).toString("utf8")).toBe("Short sentences.\n");
  });
});
