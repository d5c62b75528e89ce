import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SkillStatus } from "../src/gen/skillengine/v1/skills.js";
import { spawnService } from "./support/service-process.js";
import { connect, makeDirs } from "./support/test-engine.js";

/** The start as an operator sees it: the service's own process and its exit code (docs/composition.md#mandatory-skills). */
describe("mandatory skills are checked after the first scan of the skill directories", () => {
  let dirs: Awaited<ReturnType<typeof makeDirs>>;
  let skillDir: string;
  const folder = (): string => path.join(skillDir, "policy");

  beforeAll(async () => {
    dirs = await makeDirs();
    skillDir = path.join(dirs.root, "skills");
    await mkdir(folder(), { recursive: true });
    await writeFile(
      path.join(folder(), "SKILL.md"),
      "---\nname: policy\ndescription: The house rules every answer follows.\n---\n# Policy\nAnswer politely.\n",
    );
  });
  afterAll(async () => {
    await rm(dirs.root, { recursive: true, force: true });
  });

  const env = (extra: Record<string, string> = {}): Record<string, string> => ({
    SKILL_ENGINE_HOME: dirs.home,
    SKILL_ENGINE_SANDBOX_DIR: dirs.sandboxDir,
    SKILL_ENGINE_SKILL_DIRS: skillDir,
    SKILL_ENGINE_MANDATORY_SKILLS: "policy",
    ...extra,
  });
  const startFailure = (extra: Record<string, string> = {}): Promise<Error> =>
    spawnService(env(extra)).then(
      async (service) => {
        await service.kill();
        return new Error("expected the start to fail");
      },
      (error: unknown) => error as Error,
    );

  it("starts on a fresh home whose mandatory skill is a folder, registered by the first scan", async () => {
    const service = await spawnService(env());
    try {
      const client = connect(service.port);
      try {
        expect((await client.get("policy")).skill?.status).toBe(SkillStatus.SKILL_STATUS_ACTIVE);
      } finally {
        client.close();
      }
    } finally {
      await service.kill("SIGTERM");
    }
    expect((await service.exited).code).toBe(0);
  });

  it("refuses to start, with exit code 2, when the mandatory folder was removed while the service was down", async () => {
    await rm(folder(), { recursive: true, force: true });
    const failure = await startFailure();
    expect(failure.message).toMatch(/exited with 2 before listening/);
    expect(failure.message).toContain('skill-engine: cannot start: boot failure: mandatory skill "policy" is retired (its folder');
    expect(failure.message).not.toMatch(/\n\s+at /);
  });

  it("refuses to start, with exit code 2, when a mandatory skill is not registered anywhere (no skill directories)", async () => {
    const failure = await startFailure({ SKILL_ENGINE_SKILL_DIRS: "", SKILL_ENGINE_MANDATORY_SKILLS: "bouncer" });
    expect(failure.message).toMatch(/exited with 2 before listening/);
    expect(failure.message).toContain('boot failure: mandatory skill "bouncer" is not registered (SKILL_ENGINE_MANDATORY_SKILLS)');
  });
});
