import { createHash } from "node:crypto";
import type Database from "better-sqlite3";
import type { VectorIndex } from "../search/index.js";

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

/** A skill's evidence vectors compete with its main vector; keep its best hit only. */
export function bestPerSkill(hits: ReadonlyArray<{ id: string; score: number }>): Array<{ id: string; score: number }> {
  const best = new Map<string, number>();
  for (const hit of hits) {
    const [name = hit.id, evidence] = hit.id.split(EVIDENCE_SEPARATOR);
    const score = evidence === undefined ? hit.score : hit.score * EVIDENCE_DISCOUNT;
    if (!best.has(name) || (best.get(name) as number) < score) best.set(name, score);
  }
  return [...best.entries()].sort((a, b) => b[1] - a[1]).map(([id, score]) => ({ id, score }));
}
