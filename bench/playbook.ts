/**
 * npm run bench:playbook: the cost of GetPlaybookContext through the real service.
 *
 * Starts the service in process on 127.0.0.1:0 with the default embedder, fills one agent's
 * playbook through AddLesson (the cap raised so it can hold them) to 50 lessons, measures
 * GetPlaybookContext over a fixed set of queries, then fills it to 5,000 and measures again.
 * Lessons and queries are generated from word lists (deterministic), so the numbers are
 * comparable between runs. Beside wall-clock percentiles it reports the process's CPU time per query,
 * which stays meaningful on a machine whose cores are shared. Prints a table and writes
 * bench/results/playbook-latest.json.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { connectPlaybook } from "../test/support/playbook-client.js";
import { startTestEngine } from "../test/support/test-engine.js";

const SIZES = [50, 5_000] as const;
const QUERIES = 200;
const WARMUP = 30;

const VERBS = [
  "parsing",
  "validating",
  "merging",
  "sorting",
  "caching",
  "compressing",
  "uploading",
  "downloading",
  "scheduling",
  "retrying",
  "logging",
  "profiling",
  "migrating",
  "encrypting",
  "paginating",
  "deduplicating",
  "streaming",
  "indexing",
  "formatting",
  "testing",
];
const OBJECTS = [
  "CSV files",
  "JSON payloads",
  "SQL tables",
  "HTTP responses",
  "log lines",
  "image thumbnails",
  "email addresses",
  "calendar events",
  "currency amounts",
  "time zones",
  "user sessions",
  "shell scripts",
  "config files",
  "API tokens",
  "PDF reports",
  "Git branches",
  "Docker images",
  "DNS records",
  "sensor readings",
  "chat messages",
  "invoices",
  "search results",
  "web pages",
  "spreadsheets",
  "audio clips",
];
const CONTEXTS = [
  "in a nightly batch job",
  "for a mobile client",
  "under heavy load",
  "over an unreliable network",
  "for a legacy system",
  "on a tiny virtual machine",
  "with a strict latency budget",
  "for many tenants",
  "inside a unit test",
  "across several regions",
];
const DOMAINS = ["data", "files", "api", "web", "shell", "coding", "testing", "planning"];

/** Lesson i of the 5,000 combinations, spread so that the first 50 already cover many verbs and objects. */
function lessonAt(i: number): { trigger: string; correctPattern: string; domains: string[] } {
  const verb = VERBS[i % VERBS.length] as string;
  const object = OBJECTS[Math.floor(i / VERBS.length) % OBJECTS.length] as string;
  const context = CONTEXTS[Math.floor(i / (VERBS.length * OBJECTS.length)) % CONTEXTS.length] as string;
  return {
    trigger: `When ${verb} ${object} ${context}`,
    correctPattern: `Check the edge cases of ${object.toLowerCase()} first and keep the ${verb} step idempotent (${i}).`,
    domains: [DOMAINS[i % DOMAINS.length] as string],
  };
}

/** Query i: unique text (the embedding cache never answers for it), three in four about a lesson's subject. */
function queryAt(i: number): string {
  const verb = VERBS[(i * 7) % VERBS.length] as string;
  const object = OBJECTS[(i * 11) % OBJECTS.length] as string;
  const context = CONTEXTS[(i * 3) % CONTEXTS.length] as string;
  return i % 4 === 3
    ? `What is a good name for a ${object.toLowerCase()} mascot?`
    : `How do I handle ${verb} ${object.toLowerCase()} ${context}?`;
}

function percentile(sorted: readonly number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

const engine = await startTestEngine({ env: { SKILL_ENGINE_PLAYBOOK_MAX_LESSONS: "10000" } });
const playbook = connectPlaybook(engine.app.port);
const results: Array<Record<string, number>> = [];
try {
  let added = 0;
  for (const size of SIZES) {
    const addStarted = performance.now();
    const before = added;
    for (; added < size; added++) {
      const response = await playbook.add({ ...lessonAt(added), confidence: 0.5 });
      if (response.merged) throw new Error(`lesson ${added} was merged as a duplicate; the generator must make distinct lessons`);
    }
    const addMs = (performance.now() - addStarted) / Math.max(1, added - before);
    // Each size gets queries of its own, so no query embedding is cached from an earlier round.
    const offset = size * 1_000;
    for (let i = 0; i < WARMUP; i++)
      await playbook.call(playbook.raw.getPlaybookContext, { query: queryAt(offset + QUERIES + i), limit: 5 });
    const times: number[] = [];
    // CPU time of the whole process (service, encoder worker thread and client) during the round:
    // unlike wall-clock percentiles it does not grow when other work shares the cores.
    const cpuBefore = process.cpuUsage();
    let withContext = 0;
    let returned = 0;
    for (let i = 0; i < QUERIES; i++) {
      const started = performance.now();
      const found = await playbook.call(playbook.raw.getPlaybookContext, { query: queryAt(offset + i), limit: 5 });
      times.push(performance.now() - started);
      if (found.context !== "") withContext++;
      returned += found.lessons.length;
    }
    const cpu = process.cpuUsage(cpuBefore);
    times.sort((a, b) => a - b);
    results.push({
      lessons: size,
      queries: QUERIES,
      p50Ms: Number(percentile(times, 50).toFixed(2)),
      p95Ms: Number(percentile(times, 95).toFixed(2)),
      maxMs: Number((times[times.length - 1] ?? 0).toFixed(2)),
      cpuMsPerQuery: Number(((cpu.user + cpu.system) / 1000 / QUERIES).toFixed(2)),
      queriesWithContext: withContext,
      meanLessonsReturned: Number((returned / QUERIES).toFixed(2)),
      addLessonMeanMs: Number(addMs.toFixed(2)),
    });
  }
} finally {
  playbook.close();
  await engine.dispose();
}

console.log("GetPlaybookContext through gRPC (one agent's playbook, default embedder, limit 5)");
console.log("lessons  queries  p50 ms  p95 ms  max ms  CPU ms/query  with context  lessons/query  AddLesson mean ms");
for (const r of results) {
  console.log(
    [
      String(r.lessons).padStart(7),
      String(r.queries).padStart(8),
      String(r.p50Ms).padStart(7),
      String(r.p95Ms).padStart(7),
      String(r.maxMs).padStart(7),
      String(r.cpuMsPerQuery).padStart(13),
      String(r.queriesWithContext).padStart(13),
      String(r.meanLessonsReturned).padStart(14),
      String(r.addLessonMeanMs).padStart(18),
    ].join(" "),
  );
}
const resultsDir = fileURLToPath(new URL("./results/", import.meta.url));
await mkdir(resultsDir, { recursive: true });
await writeFile(`${resultsDir}playbook-latest.json`, `${JSON.stringify({ at: new Date().toISOString(), results }, null, 2)}\n`);
