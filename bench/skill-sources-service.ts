/**
 * npm run bench:sources-service [-- count]: skill folders through the real service. Writes `count`
 * instructions-only SKILL.md folders (default 1,000) and `executable` executable ones (default 10,
 * each proved by a sandbox run), starts the service on them, and measures:
 * - the first scan (discover, register every folder as a version, index it for routing);
 * - a rescan with nothing changed (the periodic safety net's steady cost);
 * - file change → routable: a new folder written while the service runs, until RouteSkills returns
 *   it (file watcher, default 300 ms quiet time); and an edit, until GetSkill shows the new version.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { RouteMode, ToolFormat } from "../src/gen/skillengine/v1/routing.js";
import { makeDirs, startTestEngine } from "../test/support/test-engine.js";

const count = Number(process.argv[2] ?? 1000);
const executable = Number(process.argv[3] ?? 10);
const TRIALS = 5;

const TOPICS = ["invoices", "calendars", "spreadsheets", "emails", "images", "logs", "backups", "translations", "charts", "contracts"];

async function folder(root: string, name: string, description: string, body: string, script?: string): Promise<void> {
  const dir = path.join(root, name);
  await mkdir(path.join(dir, "scripts"), { recursive: true });
  const entry = script ? "entrypoint: scripts/run.py\ntest_payload: {}\n" : "";
  await writeFile(path.join(dir, "SKILL.md"), `---\nname: ${name}\ndescription: ${description}\n${entry}---\n${body}\n`);
  if (script) await writeFile(path.join(dir, "scripts", "run.py"), script);
}

async function main(): Promise<void> {
  const dirs = await makeDirs();
  const skills = path.join(dirs.root, "skills");
  for (let i = 0; i < count; i++) {
    const topic = TOPICS[i % TOPICS.length] as string;
    await folder(skills, `guide_${i}`, `Guide ${i} on how to handle ${topic} of kind ${i}.`, "Step by step instructions. ".repeat(40));
  }
  for (let i = 0; i < executable; i++) {
    await folder(skills, `tool_${i}`, `Tool ${i} prints a number.`, "Runs a script.", `print(${i})\n`);
  }
  const t0 = performance.now();
  const engine = await startTestEngine({ dirs, env: { SKILL_ENGINE_SKILL_DIRS: skills } });
  try {
    const started = performance.now() - t0;
    // The first scan started with the service; a RescanSkillDirs runs after it, so its answer marks its end.
    const first = await engine.client.call(engine.client.raw.rescanSkillDirs, {}, 1_800_000);
    const firstScan = performance.now() - t0;
    const ready = first.sources.filter((s) => s.version > 0).length;
    const again = await engine.client.call(engine.client.raw.rescanSkillDirs, {}, 1_800_000);
    console.log(`folders                        ${count} instructions-only + ${executable} executable`);
    console.log(`service start                  ${started.toFixed(0)} ms`);
    console.log(`first scan done                ${firstScan.toFixed(0)} ms after start (${ready} registered)`);
    console.log(`rescan, nothing changed        ${again.durationMs} ms`);

    const route = async (query: string): Promise<string[]> =>
      (
        await engine.client.call(engine.client.raw.routeSkills, {
          query,
          limit: 5,
          format: ToolFormat.TOOL_FORMAT_OPENAI,
          mode: RouteMode.ROUTE_MODE_FUSED,
        })
      ).skills.map((s) => s.name);
    const waitFor = async (probe: () => Promise<boolean>): Promise<number> => {
      const t = performance.now();
      while (!(await probe())) {
        if (performance.now() - t > 120_000) throw new Error("gave up after 120 s");
        await sleep(25);
      }
      return performance.now() - t;
    };
    const added: number[] = [];
    const edited: number[] = [];
    for (let trial = 0; trial < TRIALS; trial++) {
      const name = `fresh_${trial}`;
      const description = `How to tune a bicycle derailleur, variant ${trial}.`;
      const t = performance.now();
      await folder(skills, name, description, "Shift, turn the barrel adjuster, check.");
      await waitFor(async () => (await route(`tune a bicycle derailleur variant ${trial}`)).includes(name));
      added.push(performance.now() - t);
      const te = performance.now();
      await writeFile(path.join(skills, name, "SKILL.md"), `---\nname: ${name}\ndescription: ${description}\n---\nEdited.\n`);
      await waitFor(async () => (await engine.client.get(name)).skill?.version === 2);
      edited.push(performance.now() - te);
    }
    const summary = (xs: number[]): string => {
      const sorted = [...xs].sort((a, b) => a - b);
      return `median ${(sorted[Math.floor(sorted.length / 2)] ?? 0).toFixed(0)} ms, max ${(sorted.at(-1) ?? 0).toFixed(0)} ms (${xs.map((x) => x.toFixed(0)).join(", ")})`;
    };
    console.log(`new folder → routable          ${summary(added)}`);
    console.log(`edit → new version             ${summary(edited)}`);
  } finally {
    await engine.dispose();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
