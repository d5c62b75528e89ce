/**
 * npm run bench:grants: what grants cost routing (docs/routing.md#scoping-cost).
 *
 * In process, the routing layer as the service runs it (SkillRouter over KeywordIndex and
 * SqliteVecIndex in a temp SQLite file, WAL), at 10,000 and 100,000 synthetic skills owned by 100
 * agents (one in ten public), in one run:
 *
 *   - "today": the code from before grants (the parent of the commit that added
 *     src/control/access/skill-sharing.ts, or BENCH_GRANTS_BASELINE), its src/ exported to a temp
 *     dir, no grants: the baseline;
 *   - "branch, no grants": this branch's indexes before any grant;
 *   - "branch, 1,000 grants": the same indexes after 1,000 grants (800 to agents, 200 to 20 end
 *     users; each granted skill re-indexed as GrantSkill does), routed as an agent that holds
 *     grants, as a delegating agent acting for a user that holds grants, and as an admin.
 *
 * Vectors come from a deterministic stand-in encoder (a unit vector seeded by the text's hash,
 * 512 dimensions, what the service's USE-lite would give in size): embedding 100k descriptions
 * with the real model takes far longer than the index work measured here, and the query's own
 * embedding is the same with or without grants (bench:routing measures each real model apart).
 * Latencies are per RouteSkills-equivalent call (router.route, limit 10), p50/p95 over 100
 * queries per mode after 5 warm-up queries; every configuration answers each query in turn, so
 * the load of a shared machine falls on all of them alike.
 *
 * Prints one table and writes bench/results/grants-latest.json.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import pino from "pino";
import { migrateRegistry } from "../src/schema/index.js";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));
const SCALES = (process.env.BENCH_GRANTS_SCALES ?? "10000,100000").split(",").map(Number);
const OWNERS = 100;
const PUBLIC_EVERY = 10;
const GRANTS = 1_000;
const USER_GRANTS = 200;
const USERS = 20;
const QUERIES = 100;
const WARM_UP = 5;
const LIMIT = 10;
const DIMENSIONS = 512;
const INSERT_BATCH = 2_000;
const MODES = ["fused", "keywords", "vectors"] as const;
type Mode = (typeof MODES)[number];

/** The routing module's surface this bench uses, the same in today's code and this branch's. */
interface RoutingModule {
  KeywordIndex: new (
    db: Database.Database,
    options: { logger: pino.Logger },
  ) => {
    upsert(documents: readonly Record<string, unknown>[]): void;
  };
  SqliteVecIndex: new (
    db: Database.Database,
    options: { logger: pino.Logger },
  ) => {
    ensure(dimensions: number): Promise<void>;
    upsert(entries: readonly { id: string; vector: Float32Array; payload: Record<string, unknown> }[]): Promise<void>;
    close(): Promise<void>;
  };
  SkillRouter: new (options: Record<string, unknown>) => {
    route(query: string, options: { limit: number; mode: Mode; scope: Record<string, unknown> }): Promise<{ hits: unknown[] }>;
  };
  documentText(skill: { name: string; description: string }): string;
  agentAudience?: (agentId: string) => string;
  userAudience?: (userId: string) => string;
}

function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The deterministic stand-in encoder: the same text, the same unit vector. */
const embedder = {
  modelId: "bench-hash-stand-in",
  dimensions: DIMENSIONS,
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map(vectorOf);
  },
};

function vectorOf(text: string): Float32Array {
  const random = prng(createHash("sha256").update(text).digest().readUInt32LE(0));
  const values = new Float32Array(DIMENSIONS);
  let norm = 0;
  for (let i = 0; i < DIMENSIONS; i += 2) {
    const r = Math.sqrt(-2 * Math.log(1 - random()));
    const theta = 2 * Math.PI * random();
    values[i] = r * Math.cos(theta);
    values[i + 1] = r * Math.sin(theta);
  }
  for (const v of values) norm += v * v;
  norm = Math.sqrt(norm);
  return values.map((v) => v / norm);
}

/** Pseudo-words drawn with a Zipf-like law, as in real text. */
function words(): () => string {
  const random = prng(42);
  const syllables = ["ka", "lo", "mi", "ser", "ta", "ven", "dor", "qui", "bal", "nex", "ro", "sil", "tra", "pen", "gu", "zo", "fer", "lan"];
  const list = new Set<string>();
  while (list.size < 20_000) {
    const n = 2 + Math.floor(random() * 3);
    let word = "";
    for (let i = 0; i < n; i++) word += syllables[Math.floor(random() * syllables.length)];
    list.add(word);
  }
  const all = [...list];
  const pick = prng(7);
  return () => all[Math.min(all.length - 1, Math.floor(Math.pow(all.length + 1, pick()) - 1))] as string;
}

interface Skill {
  name: string;
  description: string;
  owner: string;
  visibility: "private" | "internal" | "public";
  status: string;
  grantAudiences?: string[];
}

function synthesize(size: number): Skill[] {
  const pick = words();
  const random = prng(size + 1);
  return Array.from({ length: size }, (_, i) => {
    const name = `${Array.from({ length: 2 + Math.floor(random() * 3) }, pick).join("_")}_${i}`.slice(0, 64);
    const description = `${Array.from({ length: 8 + Math.floor(random() * 30) }, pick).join(" ")}.`;
    return { name, description, owner: `agent-${i % OWNERS}`, visibility: i % PUBLIC_EVERY === 0 ? "public" : "private", status: "active" };
  });
}

function queriesFor(): string[] {
  const pick = words();
  const random = prng(99);
  return Array.from({ length: QUERIES + WARM_UP }, () => Array.from({ length: 4 + Math.floor(random() * 6) }, pick).join(" "));
}

const payloadOf = (skill: Skill) => ({
  type: "acquired_skill",
  name: skill.name,
  owner: skill.owner,
  visibility: skill.visibility,
  status: skill.status,
  ...(skill.grantAudiences ? { grantAudiences: skill.grantAudiences } : {}),
});

async function build(routing: RoutingModule, db: Database.Database, skills: readonly Skill[]): Promise<number> {
  const logger = pino({ level: "silent" });
  const keywords = new routing.KeywordIndex(db, { logger });
  const vectors = new routing.SqliteVecIndex(db, { logger });
  await vectors.ensure(DIMENSIONS);
  const started = performance.now();
  for (let start = 0; start < skills.length; start += INSERT_BATCH) {
    const batch = skills.slice(start, start + INSERT_BATCH);
    keywords.upsert(batch.map((skill) => ({ ...skill, evidence: [] })));
    await vectors.upsert(
      batch.map((skill) => ({ id: skill.name, vector: vectorOf(routing.documentText(skill)), payload: payloadOf(skill) })),
    );
  }
  await vectors.close();
  return (performance.now() - started) / 1000;
}

interface Latency {
  p50: number;
  p95: number;
  hits: number;
}

interface Config {
  readonly config: string;
  readonly caller: string;
  readonly router: {
    route(query: string, options: { limit: number; mode: Mode; scope: Record<string, unknown> }): Promise<{ hits: unknown[] }>;
  };
  readonly scope: Record<string, unknown>;
  readonly extra?: Record<string, number>;
}

function routerOf(routing: RoutingModule, db: Database.Database): Config["router"] {
  const logger = pino({ level: "silent" });
  return new routing.SkillRouter({
    db,
    embedder,
    vectors: new routing.SqliteVecIndex(db, { logger }),
    keywords: new routing.KeywordIndex(db, { logger }),
    logger,
    splitClauses: false,
  });
}

/**
 * Every configuration answers every query in turn (query by query, not configuration by
 * configuration), so a change of load on the machine falls on all of them alike.
 */
async function measureInterleaved(configs: readonly Config[], queries: readonly string[]): Promise<Array<Record<Mode, Latency>>> {
  const results = configs.map(() => ({}) as Record<Mode, Latency>);
  for (const mode of MODES) {
    const times = configs.map(() => [] as number[]);
    const hits = configs.map(() => 0);
    for (const [q, query] of queries.entries()) {
      for (const [c, config] of configs.entries()) {
        const started = performance.now();
        const found = (await config.router.route(query, { limit: LIMIT, mode, scope: config.scope })).hits.length;
        if (q < WARM_UP) continue;
        (times[c] as number[]).push(performance.now() - started);
        hits[c] = (hits[c] as number) + found;
      }
    }
    for (const [c, list] of times.entries()) {
      list.sort((a, b) => a - b);
      const at = (p: number) => Number((list[Math.min(list.length - 1, Math.floor(p * list.length))] ?? 0).toFixed(2));
      (results[c] as Record<Mode, Latency>)[mode] = {
        p50: at(0.5),
        p95: at(0.95),
        hits: Number(((hits[c] as number) / list.length).toFixed(1)),
      };
    }
  }
  return results;
}

/** The last commit without grants: `BENCH_GRANTS_BASELINE`, or the parent of the commit that added them. */
function baselineCommit(): string {
  const chosen = process.env.BENCH_GRANTS_BASELINE;
  if (chosen) return chosen;
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repoRoot, encoding: "utf8" }).trim();
  const added = git("log", "--diff-filter=A", "--format=%H", "--", "src/control/access/skill-sharing.ts").split("\n").pop();
  if (!added) throw new Error("cannot find the commit that added grants; set BENCH_GRANTS_BASELINE to a commit without them");
  return git("rev-parse", `${added}^`);
}

/** The routing code from before grants, exported beside our node_modules, so both run in one process. */
async function todaysRouting(): Promise<{ module: RoutingModule; commit: string; dir: string }> {
  const commit = baselineCommit();
  const dir = await mkdtemp(path.join(os.tmpdir(), "bench-grants-today-"));
  execFileSync("bash", ["-c", `git archive ${commit} src | tar -x -C ${JSON.stringify(dir)}`], { cwd: repoRoot });
  await symlink(path.join(repoRoot, "node_modules"), path.join(dir, "node_modules"));
  await writeFile(path.join(dir, "package.json"), JSON.stringify({ type: "module" }));
  const module = (await import(pathToFileURL(path.join(dir, "src", "routing", "index.ts")).href)) as RoutingModule;
  return { module, commit, dir };
}

function open(file: string): Database.Database {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  migrateRegistry(db);
  return db;
}

async function main(): Promise<void> {
  const branch = {
    ...((await import("../src/routing/index.js")) as unknown as RoutingModule),
    ...(await import("../src/search/index.js")),
  } as unknown as RoutingModule;
  const today = await todaysRouting();
  const queries = queriesFor();
  const rows: Array<Record<string, unknown>> = [];
  const log = (line: string) => process.stderr.write(`[bench:grants] ${line}\n`);
  try {
    for (const size of SCALES) {
      const skills = synthesize(size);
      const dir = await mkdtemp(path.join(os.tmpdir(), `bench-grants-${size}-`));
      try {
        log(`${size}: building today's indexes (${today.commit.slice(0, 10)})`);
        const todayDb = open(path.join(dir, "today.db"));
        const todayBuild = await build(today.module, todayDb, skills);
        log(`${size}: building this branch's indexes, twice (without and with grants)`);
        const plainDb = open(path.join(dir, "branch.db"));
        const branchBuild = await build(branch, plainDb, skills);
        const grantedDb = open(path.join(dir, "granted.db"));
        await build(branch, grantedDb, skills);

        const random = prng(size + 3);
        const granted = new Map<string, Skill>();
        for (let g = 0; g < GRANTS; g++) {
          const skill = { ...(skills[Math.floor(random() * skills.length)] as Skill) };
          const previous = granted.get(skill.name) ?? skill;
          const toUser = g < USER_GRANTS;
          // agent-7 and user-3 hold a share of the grants, so the measured callers see granted skills.
          const audience = toUser
            ? (branch.userAudience as (id: string) => string)(`user-${g % 10 === 0 ? 3 : Math.floor(random() * USERS)}`)
            : (branch.agentAudience as (id: string) => string)(`agent-${g % 10 === 0 ? 7 : Math.floor(random() * OWNERS)}`);
          granted.set(skill.name, {
            ...previous,
            visibility: previous.visibility === "public" ? "public" : "internal",
            grantAudiences: [...new Set([...(previous.grantAudiences ?? []), audience])],
          });
        }
        log(`${size}: re-indexing ${granted.size} granted skills`);
        const grantStarted = performance.now();
        await build(branch, grantedDb, [...granted.values()]);
        const grantSeconds = (performance.now() - grantStarted) / 1000;

        const agent = { agentId: "agent-7", everything: false };
        const admin = { agentId: "ops", everything: true };
        const configs: Config[] = [
          {
            config: "today, no grants",
            caller: "agent",
            router: routerOf(today.module, todayDb),
            scope: agent,
            extra: { build_s: todayBuild },
          },
          { config: "today, no grants", caller: "admin", router: routerOf(today.module, todayDb), scope: admin },
          {
            config: "branch, no grants",
            caller: "agent",
            router: routerOf(branch, plainDb),
            scope: agent,
            extra: { build_s: branchBuild },
          },
          { config: "branch, no grants", caller: "admin", router: routerOf(branch, plainDb), scope: admin },
          {
            config: "branch, 1,000 grants",
            caller: "agent",
            router: routerOf(branch, grantedDb),
            scope: agent,
            extra: { grants_reindex_s: grantSeconds },
          },
          {
            config: "branch, 1,000 grants",
            caller: "delegate+user",
            router: routerOf(branch, grantedDb),
            scope: { ...agent, userId: "user-3" },
          },
          { config: "branch, 1,000 grants", caller: "admin", router: routerOf(branch, grantedDb), scope: admin },
        ];
        log(`${size}: routing ${QUERIES} queries × ${MODES.length} modes × ${configs.length} configurations, interleaved`);
        const measured = await measureInterleaved(configs, queries);
        for (const [i, c] of configs.entries()) rows.push({ size, config: c.config, caller: c.caller, ...c.extra, ...measured[i] });
        for (const db of [todayDb, plainDb, grantedDb]) db.close();
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
  } finally {
    await rm(today.dir, { recursive: true, force: true });
  }

  const lines = [
    `routing latency with grants (ms per route, limit ${LIMIT}, ${QUERIES} queries; stand-in encoder, ${DIMENSIONS} dims; today = ${today.commit.slice(0, 10)})`,
    "skills    config                  caller          fused p50/p95    keywords p50/p95   vectors p50/p95   build s",
  ];
  for (const row of rows) {
    const cell = (mode: Mode) => {
      const l = row[mode] as Latency;
      return `${l.p50.toFixed(1)} / ${l.p95.toFixed(1)}`.padEnd(18);
    };
    const build =
      row.build_s !== undefined
        ? Number(row.build_s).toFixed(1)
        : row.grants_reindex_s !== undefined
          ? `+${Number(row.grants_reindex_s).toFixed(2)} (grants)`
          : "";
    lines.push(
      `${String(row.size).padEnd(9)} ${String(row.config).padEnd(23)} ${String(row.caller).padEnd(15)} ${cell("fused")}${cell("keywords")}${cell("vectors")}${build}`,
    );
  }
  process.stdout.write(`${lines.join("\n")}\n`);
  await mkdir(path.join(repoRoot, "bench", "results"), { recursive: true });
  await writeFile(
    path.join(repoRoot, "bench", "results", "grants-latest.json"),
    `${JSON.stringify({ at: new Date().toISOString(), today: today.commit, owners: OWNERS, grants: GRANTS, userGrants: USER_GRANTS, rows }, null, 2)}\n`,
  );
}

await main();
