import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { KeywordIndex } from "./keyword-index.js";

/**
 * Keyword-only retrieval quality on the shared development set (`../shared/bench`, outside the
 * repository): 145 tools, 422 queries. Guards against regressions below the README's BM25
 * baseline; the full benchmark (vectors, fusion, feedback) is `npm run bench:routing`.
 */
const repoRoot = fileURLToPath(new URL("../../..", import.meta.url));
const benchDir = path.resolve(repoRoot, "..", "shared", "bench");
const present = existsSync(path.join(benchDir, "tools.jsonl")) && existsSync(path.join(benchDir, "queries.jsonl"));
if (!present) console.log(`devbench: ${benchDir} not found; skipping the keyword retrieval benchmark`);

/** The README's BM25 baseline for ALL (name split on "_" + description). */
const BASELINE = { recallAt1: 0.384, recallAt5: 0.616, mrr: 0.492 };

interface Tool {
  name: string;
  description: string;
}
interface Query {
  id: string;
  query: string;
  relevant: string[];
}

describe.skipIf(!present)("devbench: keyword index (FTS5 bm25)", () => {
  it("beats the README's BM25 baseline on recall@1, recall@5 and MRR", () => {
    const tools = readJsonl<Tool>("tools.jsonl");
    const queries = readJsonl<Query>("queries.jsonl");
    const db = new Database(":memory:");
    const index = new KeywordIndex(db);
    index.upsert(tools.map((tool) => ({ ...tool, owner: "bench", visibility: "public", status: "active" })));

    const rows = new Map<string, { n: number; r1: number; r5: number; mrr: number }>();
    for (const query of queries) {
      const ranked = index.search(query.query, { limit: tools.length }).map((hit) => hit.id);
      const relevant = new Set(query.relevant);
      // 1-based rank of the first relevant tool; 0 when no query word occurs in any relevant tool.
      const first = ranked.findIndex((name) => relevant.has(name)) + 1;
      for (const group of [subset(query.id), "ALL"]) {
        const row = rows.get(group) ?? { n: 0, r1: 0, r5: 0, mrr: 0 };
        row.n += 1;
        row.r1 += first === 1 ? 1 : 0;
        row.r5 += first >= 1 && first <= 5 ? 1 : 0;
        row.mrr += first >= 1 ? 1 / first : 0;
        rows.set(group, row);
      }
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
    lines.push(`README BM25 baseline ALL: ${BASELINE.recallAt1} / ${BASELINE.recallAt5} / ${BASELINE.mrr}`);
    console.log(lines.join("\n"));

    const all = rows.get("ALL");
    expect(all?.n).toBe(queries.length);
    if (!all) return;
    expect(all.r1 / all.n).toBeGreaterThanOrEqual(BASELINE.recallAt1);
    expect(all.r5 / all.n).toBeGreaterThanOrEqual(BASELINE.recallAt5);
    expect(all.mrr / all.n).toBeGreaterThanOrEqual(BASELINE.mrr);
  });
});

function readJsonl<T>(file: string): T[] {
  return readFileSync(path.join(benchDir, file), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as T);
}

/** The README's subsets: `restbench-tmdb`, `restbench-spotify`, `apibank`. */
function subset(id: string): string {
  return id.startsWith("restbench") ? id.slice(0, id.lastIndexOf("-")) : "apibank";
}
