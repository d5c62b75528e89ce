import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEngine, type TestEngine } from "./support/test-engine.js";
import { skillctl } from "./support/skillctl.js";

describe("skillctl sources, rescan, content, export and import (instructions-only folders: no sandbox run)", () => {
  let source: TestEngine;
  let target: TestEngine;
  let dir: string;
  let skills: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "skillctl-sources-"));
    skills = path.join(dir, "skills");
    await mkdir(path.join(skills, "review", "references"), { recursive: true });
    await writeFile(
      path.join(skills, "review", "SKILL.md"),
      "---\nname: code_review\ndescription: A checklist for reviewing a pull request.\n---\nWalk through {baseDir}/references/checklist.md.\n",
    );
    await writeFile(path.join(skills, "review", "references", "checklist.md"), "- tests\n- names\n");
    await mkdir(path.join(skills, "shadow"));
    await writeFile(path.join(skills, "shadow", "SKILL.md"), "---\nname: code_review\ndescription: Another one.\n---\n");
    [source, target] = await Promise.all([
      startTestEngine({ env: { SKILL_ENGINE_SKILL_DIRS: skills, SKILL_ENGINE_SKILL_WATCH: "off" } }),
      startTestEngine(),
    ]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([source?.dispose(), target?.dispose()]);
    await rm(dir, { recursive: true, force: true });
  });

  it("rescans and lists folders with their statuses, shows the content, exports a bundle another service imports", async () => {
    const rescan = await skillctl(source.app.port, "rescan");
    expect(rescan.code, rescan.stderr).toBe(0);
    expect(rescan.stdout).toMatch(/review\s+code_review\s+instructions\s+ready\s+1\s+code_review__imp_[0-9a-f]{8}/);
    expect(rescan.stdout).toMatch(/shadow\s+code_review\s+instructions\s+shadowed\s+-\s+-\s+shadowed by .*review/);

    const listed = await skillctl(source.app.port, "sources", "--json");
    expect(listed.code, listed.stderr).toBe(0);
    const parsed = JSON.parse(listed.stdout) as { directories: string[]; sources: Array<{ status: string }> };
    expect(parsed.directories).toEqual([skills]);
    expect(parsed.sources.map((s) => s.status).sort()).toEqual(["ready", "shadowed"]);

    const content = await skillctl(source.app.port, "content", "code_review");
    expect(content.code, content.stderr).toBe(0);
    expect(content.stdout).toContain("Walk through references/checklist.md.");
    expect(content.stdout).toMatch(/references\/checklist\.md\s+16/);

    const exported = await skillctl(source.app.port, "export", "code_review", "-o", path.join(dir, "review.tar.gz"));
    expect(exported.code, exported.stderr).toBe(0);
    const id = (await readFile(path.join(skills, "review", ".skill_id"), "utf8")).trim();
    expect(exported.stdout).toContain(id);

    const imported = await skillctl(target.app.port, "import", path.join(dir, "review.tar.gz"), "--public");
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toMatch(new RegExp(`imported code_review .* as ${id} \\(instructions only`));
  });
});
