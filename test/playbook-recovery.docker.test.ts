import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_HEALTH_POLICY, rebuildRegistry } from "../src/control/index.js";
import { LessonScope } from "../src/gen/skillengine/v1/playbook.js";
import { connectPlaybook, type TestPlaybookClient } from "./support/playbook-client.js";
import { spawnService } from "./support/service-process.js";
import { makeDirs, startTestEngine, type TestEngine } from "./support/test-engine.js";

const LESSON = {
  trigger: "When a web page loads its content with JavaScript after the first response",
  antiPattern: "Scraping the raw HTML and finding nothing.",
  correctPattern: "Call the JSON endpoint the page uses, or render it in a headless browser.",
  domains: ["web"],
  confidence: 0.7,
};
// Close to the trigger on purpose: this file is about persistence, not about how well an encoder paraphrases.
const QUERY = "web page content loaded by JavaScript after the first response";

const listAll = (client: TestPlaybookClient) =>
  client
    .call(client.raw.listLessons, { scope: LessonScope.LESSON_SCOPE_ALL, domain: "", limit: 0, includeInactive: true, owner: "" })
    .then((r) => r.lessons);

describe("Lessons survive restarts, a lost registry.db, a sandbox wipe and kill -9", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  });

  it("keeps lessons and their counters across a restart and a sandbox wipe, and rebuilds them from lessons.json alone", async () => {
    const dirs = await makeDirs();
    cleanups.push(() => rm(dirs.root, { recursive: true, force: true }));
    let engine: TestEngine = await startTestEngine({ dirs });
    let playbook = connectPlaybook(engine.app.port);
    const { lesson } = await playbook.add(LESSON);
    const id = lesson?.id ?? "";
    expect((await playbook.call(playbook.raw.getPlaybookContext, { query: QUERY, limit: 0 })).lessons.map((l) => l.id)).toEqual([id]);
    await playbook.call(playbook.raw.setLessonPinned, { lessonId: id, pinned: true });
    // A skill too, so that rebuild-registry has something to rebuild from.
    await engine.client.register({ name: "echo_args", code: "import sys\nprint(sys.argv[1])\n" });

    // Sandbox wipe: nothing of the playbook lives there.
    await engine.client.call(engine.client.raw.wipeSandbox, {});
    await rm(engine.sandboxDir, { recursive: true, force: true });
    expect((await playbook.call(playbook.raw.getLesson, { lessonId: id })).lesson?.trigger).toBe(LESSON.trigger);

    // Restart: the same lesson with its counters, and still retrieved.
    playbook.close();
    await engine.stop();
    engine = await startTestEngine({ dirs });
    playbook = connectPlaybook(engine.app.port);
    expect((await playbook.call(playbook.raw.getLesson, { lessonId: id })).lesson).toMatchObject({ retrievals: 1, pinned: true });
    expect((await playbook.call(playbook.raw.getPlaybookContext, { query: QUERY, limit: 0 })).context).toContain(LESSON.trigger);

    // The mirror beside the canonical skills holds every lesson.
    playbook.close();
    await engine.stop();
    const mirror = JSON.parse(await readFile(path.join(dirs.home, "memory", "acquired_skills", "lessons.json"), "utf8")) as {
      lessons: Array<{ id: string; retrievals: number }>;
    };
    expect(mirror.lessons.find((l) => l.id === id)?.retrievals).toBe(2);

    // registry.db lost: rebuild-registry brings the skills back, the next start the lessons.
    for (const suffix of ["", "-wal", "-shm"]) await rm(path.join(dirs.home, `registry.db${suffix}`), { force: true });
    const report = await rebuildRegistry({ home: dirs.home, policy: DEFAULT_HEALTH_POLICY, logger: pino({ level: "silent" }) });
    expect(report.rebuilt.map((s) => s.name)).toEqual(["echo_args"]);
    engine = await startTestEngine({ dirs });
    cleanups.push(() => engine.stop());
    playbook = connectPlaybook(engine.app.port);
    cleanups.push(async () => playbook.close());
    const [restored] = await listAll(playbook);
    expect(restored).toMatchObject({ id, trigger: LESSON.trigger, pinned: true, retrievals: 2 });
    expect((await playbook.call(playbook.raw.getPlaybookContext, { query: QUERY, limit: 0 })).lessons.map((l) => l.id)).toEqual([id]);
  });

  it("loses no acknowledged lesson when the service is killed with SIGKILL", async () => {
    const dirs = await makeDirs();
    cleanups.push(() => rm(dirs.root, { recursive: true, force: true }));
    const env = { SKILL_ENGINE_HOME: dirs.home, SKILL_ENGINE_SANDBOX_DIR: dirs.sandboxDir };
    let service = await spawnService(env);
    cleanups.push(() => service.kill());
    let playbook = connectPlaybook(service.port);
    const acknowledged: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { lesson } = await playbook.add({
        ...LESSON,
        trigger: `${LESSON.trigger} (case ${i})`,
        correctPattern: `${LESSON.correctPattern} Step ${i}.`,
      });
      acknowledged.push(lesson?.id ?? "");
    }
    await playbook.call(playbook.raw.getPlaybookContext, { query: QUERY, limit: 0 });
    playbook.close();
    await service.kill("SIGKILL");

    service = await spawnService(env);
    playbook = connectPlaybook(service.port);
    const lessons = await listAll(playbook);
    expect(lessons.map((l) => l.id).sort()).toEqual([...acknowledged].sort());
    expect(lessons.every((l) => l.retrievals === 1)).toBe(true);
    playbook.close();
    await service.kill("SIGTERM");
  });
});
