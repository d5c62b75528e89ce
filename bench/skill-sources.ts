/**
 * npm run bench:sources [-- count]: how long discovery takes for `count` SKILL.md folders (default
 * 1,000): the first pass (every `.skill_id` created) and a second pass (every id read back), each
 * beside the time to merely list the folders' files in the same run (the floor any discovery pays).
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { discoverSkillFolders } from "../src/sources/index.js";

const count = Number(process.argv[2] ?? 1000);

async function main(): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), "bench-sources-"));
  try {
    for (let i = 0; i < count; i++) {
      const dir = path.join(root, `skill_${i}`);
      await mkdir(path.join(dir, "scripts"), { recursive: true });
      const executable = i % 2 === 0;
      await writeFile(
        path.join(dir, "SKILL.md"),
        `---\nname: skill_${i}\ndescription: Skill number ${i} does a small, well-described thing with files.\n` +
          (executable ? `entrypoint: scripts/run.py\ntest_payload: "{}"\n` : "") +
          `---\n# Skill ${i}\n\n${"Step by step instructions for the task. ".repeat(40)}\n`,
      );
      if (executable) await writeFile(path.join(dir, "scripts", "run.py"), `import json, sys\nprint(json.dumps({"n": ${i}}))\n`);
    }
    const t0 = performance.now();
    for (const entry of await readdir(root)) await readdir(path.join(root, entry), { recursive: true });
    const listing = performance.now() - t0;
    const t1 = performance.now();
    const first = await discoverSkillFolders([root]);
    const firstMs = performance.now() - t1;
    const t2 = performance.now();
    const second = await discoverSkillFolders([root]);
    const secondMs = performance.now() - t2;
    const ready = (result: typeof first) => result.skills.filter((s) => s.status === "ready" || s.status === "discovered").length;
    console.log(`skill folders                 ${count}`);
    console.log(`list every file (baseline)    ${listing.toFixed(0)} ms`);
    console.log(
      `discover, first pass          ${firstMs.toFixed(0)} ms  (${ready(first)} found, .skill_id created; ${(firstMs / count).toFixed(2)} ms a folder)`,
    );
    console.log(
      `discover, second pass         ${secondMs.toFixed(0)} ms  (${ready(second)} found, .skill_id read; ${(secondMs / count).toFixed(2)} ms a folder)`,
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
