/**
 * npm run bench:duplicates [-- datasetDir]: precision and recall of the near-duplicate rule
 * (docs/learning.md#measuring-it).
 *
 * Pairs: each family of bench/duplicates-set.ts gives one positive (a skill and its paraphrased
 * re-implementation) and one negative (the skill and a different skill that shares words); the
 * development set's tools (`tools.jsonl`, default `../shared/bench`) add negatives: tools whose
 * descriptions open with the same summary ("Get Images.", "Get Details.") but do different things,
 * each with a generated API-wrapper body (the same code shape, as real wrappers have).
 * Split: families and summary groups alternate between a development and a held-out half.
 * Thresholds: the rule is description ≥ D and code ≥ C; (D, C) is the grid point with the best F0.5
 * (precision weighs more: a warning that is usually wrong gets ignored) on the development half,
 * whose 5-fold cross-validation (refitted on four folds, scored on the fifth) estimates how well
 * that choice generalises; the held-out half is scored once. Similarities come from the service's own code: routing's
 * MiniLM embedder and the learning concern's shingles.
 *
 * Candidates: a registration compares the new skill only with the DUPLICATE_CANDIDATES skills nearest
 * its description in routing's vector index, not with the whole library. The last rows screen every
 * pair's second skill through a real SkillRouter (SQLite, sqlite-vec, MiniLM) holding every first skill
 * and every development-set tool (both sets: ../shared/bench and bench/data/*), and count a pair as
 * flagged only when its first skill is among those candidates: the rule's precision and recall through
 * the index, beside the whole-library comparison above.
 *
 * Prints one table and writes bench/results/duplicates-latest.json.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import pino from "pino";
import { codeShingles, cosine, DUPLICATE_CANDIDATES, isNearDuplicate, jaccard } from "../src/learning/index.js";
import { MiniLmEmbedder, SkillRouter } from "../src/routing/index.js";
import { migrateRegistry } from "../src/schema/index.js";
import { KeywordIndex, SqliteVecIndex } from "../src/search/index.js";
import { FAMILIES, type SkillSample } from "./duplicates-set.js";

interface Pair {
  readonly id: string;
  readonly a: SkillSample;
  readonly b: SkillSample;
  readonly duplicate: boolean;
  readonly split: "dev" | "test";
}
interface Scored extends Pair {
  readonly description: number;
  readonly code: number;
}

const here = path.dirname(fileURLToPath(import.meta.url));
const datasetDir = process.argv[2] ?? path.resolve(here, "../../shared/bench");
const PAIRS_PER_GROUP = 6;

function pairs(): Pair[] {
  const out: Pair[] = [];
  FAMILIES.forEach((family, index) => {
    const split = index % 2 === 0 ? "dev" : "test";
    out.push({ id: `${family.id}/paraphrase`, a: family.skill, b: family.paraphrase, duplicate: true, split });
    out.push({ id: `${family.id}/shares-words`, a: family.skill, b: family.sharesWords, duplicate: false, split });
  });
  const file = path.join(datasetDir, "tools.jsonl");
  if (!existsSync(file)) {
    process.stderr.write(`no ${file}: the development set's negatives are left out\n`);
    return out;
  }
  const tools = readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as { name: string; description: string });
  const groups = new Map<string, { name: string; description: string }[]>();
  for (const tool of tools) {
    const summary = tool.description.split(".")[0] ?? "";
    groups.set(summary, [...(groups.get(summary) ?? []), tool]);
  }
  let groupIndex = 0;
  for (const [summary, members] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    if (members.length < 2) continue;
    const split = groupIndex++ % 2 === 0 ? "dev" : "test";
    let taken = 0;
    for (let i = 0; i < members.length && taken < PAIRS_PER_GROUP; i++) {
      for (let j = i + 1; j < members.length && taken < PAIRS_PER_GROUP; j++, taken++) {
        const [x, y] = [members[i], members[j]] as [{ name: string; description: string }, { name: string; description: string }];
        out.push({ id: `devset/${summary}/${x.name}~${y.name}`, a: wrapper(x), b: wrapper(y), duplicate: false, split });
      }
    }
  }
  return out;
}

/** An API wrapper for a development-set tool: the endpoint from its name, the payload passed on. */
function wrapper(tool: { name: string; description: string }): SkillSample {
  const endpoint = tool.name.split("_").slice(2).join("/");
  return {
    description: tool.description,
    code: `import json, sys\nargs = json.loads(sys.argv[1])\nrequest = {"endpoint": "/${endpoint}", "params": args}\nprint(json.dumps(request))\n`,
  };
}

/** Every development set's tools: ../shared/bench's (or the one given) and each bench/data/<set>/tools.jsonl. */
function developmentTools(): Array<{ name: string; description: string }> {
  const dataDir = path.join(here, "data");
  const files = [path.join(datasetDir, "tools.jsonl")];
  if (existsSync(dataDir)) for (const set of readdirSync(dataDir)) files.push(path.join(dataDir, set, "tools.jsonl"));
  return files
    .filter((file) => existsSync(file))
    .flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => JSON.parse(l) as { name: string; description: string }),
    );
}

/**
 * For each pair, whether its first skill is among the candidates the index names for its second:
 * a real SkillRouter over a library of every first skill and every development-set tool.
 */
async function candidatesFound(all: readonly Pair[], embedder: MiniLmEmbedder): Promise<{ found: Map<string, boolean>; library: number }> {
  const logger = pino({ level: "silent" });
  const db = new Database(":memory:");
  migrateRegistry(db);
  const router = new SkillRouter({
    db,
    embedder,
    vectors: new SqliteVecIndex(db, { logger }),
    keywords: new KeywordIndex(db, { logger }),
    logger,
  });
  await router.init([]);
  const nameOf = new Map<string, string>();
  const library = [...all.map((p) => p.a.description), ...developmentTools().map((t) => t.description)].filter(
    (description) => !nameOf.has(description) && nameOf.set(description, `skill_${nameOf.size}`),
  );
  for (const description of library) {
    await router.index({ name: nameOf.get(description) as string, description, owner: "bench", visibility: "public", status: "active" });
  }
  const found = new Map<string, boolean>();
  for (const pair of all) {
    const [vector] = await embedder.embed([pair.b.description]);
    const names = await router.nearestSkills(vector as Float32Array, { agentId: "bench", everything: true }, DUPLICATE_CANDIDATES + 1);
    // The second skill's own description may be in the library (a tool of a pair): it is not its own candidate.
    const own = nameOf.get(pair.b.description);
    const candidates = names.filter((name) => name !== own).slice(0, DUPLICATE_CANDIDATES);
    found.set(pair.id, candidates.includes(nameOf.get(pair.a.description) as string));
  }
  db.close();
  return { found, library: library.length };
}

const D_GRID = Array.from({ length: 41 }, (_, i) => Math.round((0.5 + i * 0.0125) * 10000) / 10000);
const C_GRID = Array.from({ length: 13 }, (_, i) => Math.round(i * 0.05 * 100) / 100);

function confusion(scored: readonly Scored[], d: number, c: number) {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  let tn = 0;
  for (const p of scored) {
    const flagged = isNearDuplicate(p.description, p.code, { description: d, code: c });
    if (flagged && p.duplicate) tp++;
    else if (flagged) fp++;
    else if (p.duplicate) fn++;
    else tn++;
  }
  const precision = tp + fp === 0 ? 1 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 1 : tp / (tp + fn);
  // F0.5: precision weighs more than recall; a warning that is usually wrong teaches agents to ignore it.
  const f1 = precision + recall === 0 ? 0 : (1.25 * precision * recall) / (0.25 * precision + recall);
  return { tp, fp, fn, tn, precision, recall, f1 };
}

/** Best grid point on `scored` by F1, ties to higher precision, then stricter thresholds. */
function fit(scored: readonly Scored[]): { d: number; c: number } {
  let best = { d: 1, c: 1, f1: -1, precision: 0 };
  for (const d of D_GRID) {
    for (const c of C_GRID) {
      const m = confusion(scored, d, c);
      if (m.f1 > best.f1 + 1e-9 || (Math.abs(m.f1 - best.f1) < 1e-9 && m.precision > best.precision + 1e-9)) {
        best = { d, c, f1: m.f1, precision: m.precision };
      }
    }
  }
  return { d: best.d, c: best.c };
}

async function main(): Promise<void> {
  const all = pairs();
  const embedder = new MiniLmEmbedder();
  const texts = [...new Set(all.flatMap((p) => [p.a.description, p.b.description]))];
  const vectors = new Map<string, Float32Array>();
  const embedded = await embedder.embed(texts);
  texts.forEach((t, i) => vectors.set(t, embedded[i] as Float32Array));
  const candidates = await candidatesFound(all, embedder);
  await embedder.close?.();
  const scored: Scored[] = all.map((p) => ({
    ...p,
    description: cosine(vectors.get(p.a.description) as Float32Array, vectors.get(p.b.description) as Float32Array),
    code: jaccard(codeShingles(p.a.code), codeShingles(p.b.code)),
  }));
  // Through the index: a pair whose first skill is not among the candidates is never compared.
  const throughIndex = (set: readonly Scored[]) => set.map((p) => (candidates.found.get(p.id) ? p : { ...p, description: -1 }));
  const dev = scored.filter((p) => p.split === "dev");
  const test = scored.filter((p) => p.split === "test");

  // 5-fold cross-validation on the development half: pick each fold's thresholds on the other four,
  // score on it; the thresholds kept are those fitted on the whole development half.
  const folds = 5;
  const cv = { tp: 0, fp: 0, fn: 0, tn: 0 };
  for (let k = 0; k < folds; k++) {
    const train = dev.filter((_, i) => i % folds !== k);
    const held = dev.filter((_, i) => i % folds === k);
    const t = fit(train);
    const m = confusion(held, t.d, t.c);
    cv.tp += m.tp;
    cv.fp += m.fp;
    cv.fn += m.fn;
    cv.tn += m.tn;
  }
  const chosen = fit(dev);
  const onTest = confusion(test, chosen.d, chosen.c);
  const descriptionOnly = fit(dev.map((p) => ({ ...p, code: 1 })));
  const descOnlyTest = confusion(test, descriptionOnly.d, 0);
  const indexedTest = confusion(throughIndex(test), chosen.d, chosen.c);
  const indexedDev = confusion(throughIndex(dev), chosen.d, chosen.c);
  const wholeDev = confusion(dev, chosen.d, chosen.c);
  const cvPrecision = cv.tp + cv.fp === 0 ? 1 : cv.tp / (cv.tp + cv.fp);
  const cvRecall = cv.tp + cv.fn === 0 ? 1 : cv.tp / (cv.tp + cv.fn);

  const count = (set: readonly Scored[]) => `${set.filter((p) => p.duplicate).length}+/${set.filter((p) => !p.duplicate).length}-`;
  const rows = [
    ["split", "pairs", "rule", "precision", "recall", "TP", "FP", "FN", "TN"],
    [
      "dev, 5-fold CV",
      count(dev),
      "refitted per fold",
      cvPrecision.toFixed(3),
      cvRecall.toFixed(3),
      String(cv.tp),
      String(cv.fp),
      String(cv.fn),
      String(cv.tn),
    ],
    [
      "held-out test",
      count(test),
      `desc ≥ ${chosen.d} and code ≥ ${chosen.c}`,
      onTest.precision.toFixed(3),
      onTest.recall.toFixed(3),
      String(onTest.tp),
      String(onTest.fp),
      String(onTest.fn),
      String(onTest.tn),
    ],
    [
      "held-out test",
      count(test),
      `desc ≥ ${descriptionOnly.d} only`,
      descOnlyTest.precision.toFixed(3),
      descOnlyTest.recall.toFixed(3),
      String(descOnlyTest.tp),
      String(descOnlyTest.fp),
      String(descOnlyTest.fn),
      String(descOnlyTest.tn),
    ],
    ...(
      [
        ["dev, whole library", count(dev), wholeDev],
        [`dev, ${DUPLICATE_CANDIDATES} nearest of ${candidates.library}`, count(dev), indexedDev],
        [`test, ${DUPLICATE_CANDIDATES} nearest of ${candidates.library}`, count(test), indexedTest],
      ] as const
    ).map(([split, pairs, m]) => [
      split,
      pairs,
      `desc ≥ ${chosen.d} and code ≥ ${chosen.c}`,
      m.precision.toFixed(3),
      m.recall.toFixed(3),
      String(m.tp),
      String(m.fp),
      String(m.fn),
      String(m.tn),
    ]),
  ];
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  for (const row of rows) process.stdout.write(`${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  ")}\n`);
  const misses = test
    .filter((p) => isNearDuplicate(p.description, p.code, { description: chosen.d, code: chosen.c }) !== p.duplicate)
    .map((p) => `${p.duplicate ? "missed" : "false alarm"} ${p.id}: desc ${p.description.toFixed(3)} code ${p.code.toFixed(3)}`);
  for (const miss of misses) process.stdout.write(`  ${miss}\n`);
  const results = path.join(here, "results");
  await mkdir(results, { recursive: true });
  await writeFile(
    path.join(results, "duplicates-latest.json"),
    `${JSON.stringify(
      {
        thresholds: chosen,
        crossValidation: { ...cv, precision: cvPrecision, recall: cvRecall },
        test: onTest,
        descriptionOnly: { threshold: descriptionOnly.d, test: descOnlyTest },
        throughIndex: { candidates: DUPLICATE_CANDIDATES, library: candidates.library, dev: indexedDev, test: indexedTest },
        pairs: scored.map((p) => ({ id: p.id, split: p.split, duplicate: p.duplicate, description: p.description, code: p.code })),
      },
      null,
      2,
    )}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
