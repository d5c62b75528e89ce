/**
 * npm run bench:console: what the operator console's library page costs as the library grows
 * (docs/console.md#cost), beside ListSkills in the same run.
 *
 * For each size (1,000 and 10,000 skills) a home is prepared offline through the control plane's
 * own storage API, the steps a registration commits after its test run (docs/skill-lifecycle.md#registration,
 * step 7): the history file, the dependency declaration, the active file, the registry's version.
 * Only the sandboxed test run is skipped: 10,000 runs of the TDD gate would take most of an hour
 * and measure the sandbox, not the console. A tenth of the skills get 12 recorded invocations
 * (a mix of successes and failures), through SkillRegistry.recordInvocation.
 *
 * Then the real service starts on that home (console on, no tokens: the local agent on loopback),
 * its routing embedder the tests' OpenAI-compatible server on loopback that returns deterministic vectors
 * (the models' cost is not the console's; start-up indexes every skill). Measured, alternating,
 * after a warm-up: GET /console/library (the first page of 100 rows), the last page, the library
 * filtered by kind (joined in the page's one query), a skill's page, and ListSkills' first page of 1,000
 * through gRPC; then every page of ListSkills is followed once to check the library's size.
 *
 * Prints a table and writes bench/results/console-latest.json.
 */
import { mkdir, rm, writeFile } from "node:fs/promises";
import { performance } from "node:perf_hooks";
import { EmbeddingsTestServer } from "../test/support/embeddings-test-server.js";
import { seedLibrary } from "../test/support/seeded-library.js";
import { makeDirs, startTestEngine } from "../test/support/test-engine.js";

const SIZES = [1_000, 10_000];
const ROUNDS = 30;
const WARM_UP = 3;
const DIMENSIONS = 64;

async function main(): Promise<void> {
  const embedder = await EmbeddingsTestServer.start();
  embedder.dimensions = DIMENSIONS;
  const results: Record<string, unknown>[] = [];
  for (const size of SIZES) {
    const dirs = await makeDirs();
    const seeded = performance.now();
    await prepareHome(dirs.home, size);
    const seedMs = performance.now() - seeded;
    const started = performance.now();
    const engine = await startTestEngine({
      dirs,
      env: {
        SKILL_ENGINE_CONSOLE: "on",
        ...embedder.serviceEnv(),
      },
    });
    const startMs = performance.now() - started;
    try {
      const base = `http://127.0.0.1:${engine.app.metricsPort}`;
      const cookie = await sessionCookie(base);
      // Pages follow a cursor (the last name shown): the deepest page is the one after the last skill but 100.
      const lastPageAfter = skillName(size - 101);
      const probes: Record<string, () => Promise<unknown>> = {
        "library page 1": () => page(base, cookie, "/console/library"),
        "library, last page": () => page(base, cookie, `/console/library?after=${encodeURIComponent(lastPageAfter)}`),
        "library, kind=plain": () => page(base, cookie, "/console/library?kind=plain"),
        "skill page": () => page(base, cookie, `/console/skills/${skillName(0)}`),
        "ListSkills, first page of 1,000 (gRPC)": () => engine.client.list(false),
      };
      const samples = new Map<string, number[]>(Object.keys(probes).map((k) => [k, []]));
      for (let round = 0; round < WARM_UP + ROUNDS; round++) {
        for (const [label, probe] of Object.entries(probes)) {
          const t = performance.now();
          await probe();
          if (round >= WARM_UP) samples.get(label)?.push(performance.now() - t);
        }
      }
      // Every page followed: the library really holds `size` skills.
      let listed = 0;
      let pageToken = "";
      do {
        const answer = await engine.client.call(engine.client.raw.listSkills, {
          includeInactive: false,
          owner: "",
          pageSize: 1_000,
          pageToken,
        });
        listed += answer.skills.length;
        pageToken = answer.nextPageToken;
      } while (pageToken !== "");
      if (listed !== size) throw new Error(`ListSkills returned ${listed} skills over its pages, expected ${size}`);
      for (const [label, values] of samples) {
        results.push({
          skills: size,
          probe: label,
          p50Ms: round1(pct(values, 0.5)),
          p95Ms: round1(pct(values, 0.95)),
          rounds: values.length,
        });
      }
      results.push(
        { skills: size, probe: "prepare home (offline)", ms: Math.round(seedMs) },
        { skills: size, probe: "service start (incl. routing index)", ms: Math.round(startMs) },
      );
    } finally {
      await engine.dispose();
    }
  }
  await embedder.stop();
  console.table(results);
  await mkdir("bench/results", { recursive: true });
  await writeFile("bench/results/console-latest.json", `${JSON.stringify({ at: new Date().toISOString(), results }, null, 2)}\n`);
}

const skillName = (i: number): string => `skill_${String(i).padStart(5, "0")}`;

/** The commit half of a registration for `size` skills (no test run), and invocations for a tenth of them. */
async function prepareHome(home: string, size: number): Promise<void> {
  const owners = ["local", "agent-a", "agent-b", "agent-c"];
  await seedLibrary(
    home,
    Array.from({ length: size }, (_, i) => skillName(i)),
    {
      access: (i) => ({ owner: owners[i % owners.length] ?? "local", visibility: i % 3 === 0 ? "public" : "private" }),
      after: (registry, name, i) => {
        if (i % 10 !== 0) return;
        for (let k = 0; k < 12; k++) {
          const success = (i + k) % 4 !== 0;
          registry.recordInvocation({
            name,
            version: 1,
            at: new Date(Date.now() - (12 - k) * 3_600_000),
            success,
            durationMs: 40 + ((i * 7 + k * 13) % 90),
            exitCode: success ? 0 : 1,
            timedOut: false,
            oomKilled: false,
            errorSummary: success ? "" : "ValueError: synthetic",
            caller: "local",
          });
        }
      },
    },
  );
}

/** The local agent's session (no tokens configured): the first GET opens it. */
async function sessionCookie(base: string): Promise<string> {
  const response = await fetch(`${base}/console/library`, { redirect: "manual" });
  const cookie = response.headers.get("set-cookie")?.split(";")[0];
  if (!cookie) throw new Error("the console opened no session");
  await response.text();
  return cookie;
}

async function page(base: string, cookie: string, route: string): Promise<void> {
  const response = await fetch(`${base}${route}`, { headers: { cookie } });
  if (response.status !== 200) throw new Error(`${route}: HTTP ${response.status}`);
  await response.text();
}

function pct(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
}

const round1 = (n: number): number => Math.round(n * 10) / 10;

main().catch(async (error: unknown) => {
  console.error(error);
  process.exitCode = 1;
  await rm("bench/results/console-latest.json", { force: true });
});
