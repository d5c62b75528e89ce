import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { bm25Baseline } from "../../test/support/bm25-baseline.js";
import { KeywordIndex } from "./keyword-index.js";

/**
 * Keyword-only retrieval quality on the shared development set (`../shared/bench`, outside the
 * repository): 145 tools, 422 queries. Guards against regressions below plain BM25, computed
 * in the same run; the full benchmark (vectors, fusion, feedback) is `npm run bench:routing`.
 * Without the set (a clone with no ../shared/bench), the suite says so in its name and its log.
 */
const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const benchDir = path.resolve(repoRoot, "..", "shared", "bench");
const present = existsSync(path.join(benchDir, "tools.jsonl")) && existsSync(path.join(benchDir, "queries.jsonl"));
const title = present
  ? "devbench: keyword index (FTS5 bm25)"
  : `devbench: NOT RUN: ${benchDir} not found, so keyword retrieval quality is not checked in this run`;
if (!present) console.warn(`[devbench] ${benchDir} not found: keyword retrieval quality is NOT checked in this run`);

interface Tool {
  name: string;
  description: string;
}
interface Query {
  id: string;
  query: string;
  relevant: string[];
}

describe.skipIf(!present)(title, () => {
  it("beats plain BM25, computed in the same run, on recall@1, recall@5 and MRR", () => {
    const tools = readJsonl<Tool>("tools.jsonl");
    const queries = readJsonl<Query>("queries.jsonl");
    const db = new Database(":memory:");
    const index = new KeywordIndex(db);
    index.upsert(tools.map((tool) => ({ ...tool, owner: "bench", visibility: "public", status: "active" })));

    const bm25 = bm25Baseline(tools);
    const rows = new Map<string, Row>();
    const baseline: Row = { n: 0, r1: 0, r5: 0, mrr: 0 };
    for (const query of queries) {
      const relevant = new Set(query.relevant);
      const ranked = index.search(query.query, { limit: tools.length }).map((hit) => hit.id);
      for (const group of [subset(query.id), "ALL"]) {
        const row = rows.get(group) ?? { n: 0, r1: 0, r5: 0, mrr: 0 };
        count(row, ranked, relevant);
        rows.set(group, row);
      }
      count(baseline, bm25.rank(query.query), relevant);
    }
    db.close();

    const lines = [`devbench keyword-only (FTS5 bm25, porter unicode61, weights name 2 / description 1), ${tools.length} tools`];
    lines.push(`${"subset".padEnd(18)} ${"n".padStart(4)} ${"recall@1".padStart(9)} ${"recall@5".padStart(9)} ${"MRR".padStart(6)}`);
    for (const [group, row] of [...rows].sort(([a], [b]) => Number(a === "ALL") - Number(b === "ALL") || a.localeCompare(b))) {
      lines.push(
        `${group.padEnd(18)} ${String(row.n).padStart(4)} ${(row.r1 / row.n).toFixed(3).padStart(9)} ` +
          `${(row.r5 / row.n).toFixed(3).padStart(9)} ${(row.mrr / row.n).toFixed(3).padStart(6)}`,
      );
    }
    lines.push(
      `plain BM25 (same run)  ALL ${String(baseline.n).padStart(4)} ${(baseline.r1 / baseline.n).toFixed(3).padStart(9)} ` +
        `${(baseline.r5 / baseline.n).toFixed(3).padStart(9)} ${(baseline.mrr / baseline.n).toFixed(3).padStart(6)}`,
    );
    console.log(lines.join("\n"));

    const all = rows.get("ALL");
    expect(all?.n).toBe(queries.length);
    if (!all) return;
    expect(baseline.n).toBe(queries.length);
    expect(all.r1 / all.n).toBeGreaterThanOrEqual(baseline.r1 / baseline.n);
    expect(all.r5 / all.n).toBeGreaterThanOrEqual(baseline.r5 / baseline.n);
    expect(all.mrr / all.n).toBeGreaterThanOrEqual(baseline.mrr / baseline.n);
  });
});

interface Row {
  n: number;
  r1: number;
  r5: number;
  mrr: number;
}

/** Adds one query: the 1-based rank of its first relevant tool (none found counts 0 everywhere). */
function count(row: Row, ranked: readonly string[], relevant: ReadonlySet<string>): void {
  const first = ranked.findIndex((name) => relevant.has(name)) + 1;
  row.n += 1;
  row.r1 += first === 1 ? 1 : 0;
  row.r5 += first >= 1 && first <= 5 ? 1 : 0;
  row.mrr += first >= 1 ? 1 / first : 0;
}

function readJsonl<T>(file: string): T[] {
  return readFileSync(path.join(benchDir, file), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as T);
}

/** The dataset's subsets: `restbench-tmdb`, `restbench-spotify`, `apibank`. */
function subset(id: string): string {
  return id.startsWith("restbench") ? id.slice(0, id.lastIndexOf("-")) : "apibank";
}
