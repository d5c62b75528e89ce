import { createHash } from "node:crypto";
import type Database from "better-sqlite3";
import type { VectorIndex } from "../search/index.js";
import { background, type BackgroundPrior, MIN_BACKGROUND_SPREAD } from "./relevance.js";

/** Joins a skill's name and an evidence hash into the id of that evidence's vector. */
const EVIDENCE_SEPARATOR = "::evidence::";
/**
 * Credited queries kept per skill (the most recent). Bounded so that a skill credited for
 * everything (a prerequisite every task calls, say) cannot become a hub near every query, and so
 * the work of re-indexing a skill stays bounded.
 */
export const MAX_EVIDENCE_PER_SKILL = 20;
/**
 * An evidence vector's similarity counts slightly less than the description's: a query that
 * matches what a skill says it does outranks one that only resembles an earlier query.
 */
const EVIDENCE_DISCOUNT = 0.9;
/**
 * What the cosines between a query and the evidence vectors a search returns are taken to be before
 * any is seen, worth five of them: the medians over both development sets (train halves, all-MiniLM-L6-v2:
 * mean 0.24, spread 0.10; the main vectors' were 0.19 and 0.064). Queries resemble one another more,
 * and more unevenly, than they resemble descriptions (docs/routing.md#what-evidence-counts-for).
 */
export const EVIDENCE_BACKGROUND_PRIOR: BackgroundPrior = { mean: 0.24, spread: 0.1, weight: 5 };

/** What of a query is kept as evidence: trimmed, its first 500 characters. */
export function evidenceText(query: string): string {
  return query.trim().slice(0, 500);
}

/** The hash a piece of evidence is stored and its vector named by (of {@link evidenceText}). */
export function evidenceHash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

/** The vector id of one piece of a skill's evidence. */
export function evidenceVectorId(name: string, hash: string): string {
  return `${name}${EVIDENCE_SEPARATOR}${hash}`;
}

/**
 * The queries a skill was credited for (docs/routing.md#learning-from-use), kept in
 * `route_evidence`: each becomes keyword text and a vector of its own when the skill is indexed.
 */
export class RouteEvidence {
  constructor(
    private readonly db: Database.Database,
    private readonly vectors: VectorIndex,
  ) {}

  /** Stores `query` as evidence for `name`; false when it is blank or already stored. */
  remember(name: string, query: string): boolean {
    const text = evidenceText(query);
    if (text === "") return false;
    const hash = evidenceHash(text);
    return (
      this.db.prepare("INSERT OR IGNORE INTO route_evidence (name, query, hash, at) VALUES (?, ?, ?, ?)").run(name, text, hash, Date.now())
        .changes > 0
    );
  }

  /** How many stored queries route to `name` as evidence. */
  count(name: string): number {
    return this.db.prepare<[string], { n: number }>("SELECT COUNT(*) AS n FROM route_evidence WHERE name = ?").get(name)?.n ?? 0;
  }

  /** The evidence of `name` that is kept (the most recent), oldest first. */
  of(name: string): Array<{ query: string; hash: string }> {
    return this.db
      .prepare<[string, number], { query: string; hash: string }>(
        "SELECT query, hash FROM (SELECT query, hash, at FROM route_evidence WHERE name = ? ORDER BY at DESC LIMIT ?) ORDER BY at",
      )
      .all(name, MAX_EVIDENCE_PER_SKILL);
  }

  /** Drops evidence beyond the cap (oldest first), from the table and from the vector index. */
  async prune(name: string): Promise<void> {
    const stale = this.db
      .prepare<[string, number], { hash: string }>("SELECT hash FROM route_evidence WHERE name = ? ORDER BY at DESC LIMIT -1 OFFSET ?")
      .all(name, MAX_EVIDENCE_PER_SKILL);
    if (stale.length === 0) return;
    const drop = this.db.prepare("DELETE FROM route_evidence WHERE name = ? AND hash = ?");
    for (const { hash } of stale) drop.run(name, hash);
    await this.vectors.remove(stale.map(({ hash }) => evidenceVectorId(name, hash)));
  }
}

/**
 * A route's vector scores, one per skill, best first (docs/routing.md#what-evidence-counts-for): a skill's main
 * vector counts its cosine; an evidence vector counts how far it stands out from the query's other
 * evidence hits, put on the main vectors' scale (the same number of spreads above their mean), × 0.9,
 * and never more than its own cosine × 0.9. Queries share their phrasing ("Could you help me …
 * 'example.jpg'") far more than they share a description's words, so a raw query-to-query cosine
 * lifted a skill credited for a sibling request above the skill a query needs; standing out from the
 * other evidence is what an earlier query that asked the same thing does. Each background is the
 * hits of its kind ({@link background}: the best left out, pooled with a prior).
 */
export function scoreWithEvidence(hits: ReadonlyArray<{ id: string; score: number }>): Array<{ id: string; score: number }> {
  const main: number[] = [];
  const evidence: number[] = [];
  for (const hit of hits) (hit.id.includes(EVIDENCE_SEPARATOR) ? evidence : main).push(hit.score);
  const descending = (a: number, b: number) => b - a;
  const mainBackground = background(main.sort(descending));
  const evidenceBackground = background(evidence.sort(descending), EVIDENCE_BACKGROUND_PRIOR);
  const best = new Map<string, number>();
  for (const hit of hits) {
    const [name = hit.id, piece] = hit.id.split(EVIDENCE_SEPARATOR);
    let score = hit.score;
    if (piece !== undefined) {
      const standing = (hit.score - evidenceBackground.mean) / Math.max(evidenceBackground.spread, MIN_BACKGROUND_SPREAD);
      const onMainScale = mainBackground.mean + standing * Math.max(mainBackground.spread, MIN_BACKGROUND_SPREAD);
      score = EVIDENCE_DISCOUNT * Math.min(hit.score, onMainScale);
    }
    if (!best.has(name) || (best.get(name) as number) < score) best.set(name, score);
  }
  return [...best.entries()].sort((a, b) => b[1] - a[1]).map(([id, score]) => ({ id, score }));
}

/**
 * A skill's evidence vectors compete with its main vector; keep its best hit only, an evidence hit
 * at its cosine × 0.9. For nearness to a skill (the near-duplicate screen), not for routing, which
 * reads evidence against its background ({@link scoreWithEvidence}).
 */
export function bestPerSkill(hits: ReadonlyArray<{ id: string; score: number }>): Array<{ id: string; score: number }> {
  const best = new Map<string, number>();
  for (const hit of hits) {
    const [name = hit.id, evidence] = hit.id.split(EVIDENCE_SEPARATOR);
    const score = evidence === undefined ? hit.score : hit.score * EVIDENCE_DISCOUNT;
    if (!best.has(name) || (best.get(name) as number) < score) best.set(name, score);
  }
  return [...best.entries()].sort((a, b) => b[1] - a[1]).map(([id, score]) => ({ id, score }));
}
