import type Database from "better-sqlite3";
import type { Logger } from "pino";
import { withSqlite } from "../sqlite/index.js";
import { assertSqlIdentifier } from "./index-errors.js";
import { capEvidence, recurringWords, WordStems } from "./evidence-words.js";
import { ftsMatchExpression, ftsQueryTerms } from "./fts-query.js";
import { nameWords } from "./name-tokens.js";
import { audienceOf, audiencesOf, filterMatchesNothing, type SkillVisibility, type VectorSearchFilter } from "./vector-index.js";

/** What the keyword index knows about one skill. */
export interface KeywordDocument {
  readonly name: string;
  readonly description: string;
  readonly owner: string;
  readonly visibility: SkillVisibility;
  readonly status: string;
  /** The grantees' audiences, as the vector index takes them (docs/routing.md#scoping). */
  readonly grantAudiences?: readonly string[];
  /**
   * Credited past queries and registration examples. Left out, the index keeps the evidence it
   * already holds, so a new version of a skill does not forget what routing learned about it.
   * Only their recurring words are matched ({@link KeywordIndexOptions.evidenceRecurrence}).
   */
  readonly evidence?: readonly string[];
}

/** Relative weight of a match in each column, as `bm25()` multiplies them. */
export interface KeywordColumnWeights {
  readonly name: number;
  readonly description: number;
  readonly evidence: number;
}

export interface KeywordIndexOptions {
  /**
   * Name of the FTS5 table; the documents live in `<table>_docs`.
   * @default "skill_keywords"
   */
  readonly table?: string;
  /**
   * Column weights. Name words get more weight than description words: a name is a handful of
   * words chosen to say what the skill does, a description also says how.
   * @default { name: 2, description: 1, evidence: 1 }
   */
  readonly weights?: KeywordColumnWeights;
  /**
   * The FTS5 tokenizer. `porter unicode61 remove_diacritics 2`: unicode61 folds case and accents
   * for any script, and Porter stemming lets "movies"/"movie" and "searching"/"search" meet, which
   * matters on one-sentence descriptions where an exact form rarely repeats (devbench: see the
   * test for the measured gain over plain unicode61). Changing it rebuilds the index.
   * @default "porter unicode61 remove_diacritics 2"
   */
  readonly tokenizer?: string;
  /**
   * Cap on a skill's evidence text; the oldest queries go first. Without it a popular skill's
   * document would grow without bound and BM25's length normalization would bury it.
   * @default 2000
   */
  readonly maxEvidenceChars?: number;
  /**
   * A word of a skill's evidence is matched only when at least this many of its evidence queries
   * use it (by stem); 1 matches every word. A word one credited query used once is as likely its
   * setting (a city, a date, a file name) as its ask, and matching it sent a car-rental request to
   * the weather skill credited for another trip (docs/routing.md#what-evidence-counts-for).
   * @default 2
   */
  readonly evidenceRecurrence?: number;
  /**
   * A query word in the evidence of more than this share of the skills that hold evidence is
   * matched against names and descriptions only: it is how queries are phrased ("help", "example",
   * "jpg"), not what one skill is asked for. 1 turns it off.
   * @default 0.1
   */
  readonly boilerplateShare?: number;
  /**
   * The share above is taken of at least this many skills, so that in a library where only a few
   * skills hold evidence a word two of them share still counts.
   * @default 10
   */
  readonly boilerplateMinSkills?: number;
  readonly logger?: Logger;
}

/** One keyword hit: `score` is BM25 (higher is better, unbounded, comparable only within one query). */
export interface KeywordHit {
  readonly id: string;
  readonly score: number;
}

export interface KeywordSearchOptions {
  readonly limit: number;
  /** Same semantics as the vector index: AND of allowlists, an empty list matches nothing. */
  readonly filter?: VectorSearchFilter;
}

const DEFAULT_WEIGHTS: KeywordColumnWeights = { name: 2, description: 1, evidence: 1 };
/** The columns a boilerplate word is matched in: everything but the evidence. */
const DESCRIBING_COLUMNS = ["name_tokens", "description"] as const;
const DEFAULT_TOKENIZER = "porter unicode61 remove_diacritics 2";

/**
 * BM25 keyword ranking with SQLite FTS5, inside a database the caller owns (`registry.db`).
 *
 * Documents live in an ordinary table (`<table>_docs`: name, status, owner, visibility, the
 * derived audience ({@link audienceOf}), the three text columns, and `heard`: the evidence queries
 * as they came, of which `evidence` holds the recurring words) that an *external-content*
 * FTS5 table indexes through triggers; a second one (`<table>_heard`) indexes `heard`, to count
 * how many skills' evidence uses a word (docs/routing.md#what-evidence-counts-for). The plain
 * table makes filters ordinary `WHERE`s on the matched rows and lets a tokenizer change rebuild the
 * FTS index from it; FTS5 itself stores no second copy of the text. A docs table from before
 * `audience` or `heard` gains the column, filled in place.
 *
 * FTS5's `bm25()` uses k1 = 1.2 and b = 0.75, the same as the devbench baseline.
 */
export class KeywordIndex {
  private readonly fts: string;
  private readonly docs: string;
  /** Grantees' audiences of documents with grants (`granted` > 0); a document's first audience is its `audience` column. */
  private readonly audiences: string;
  /** FTS5 index of the evidence queries as they came (`heard`), for how many skills use a word. */
  private readonly heard: string;
  private readonly weights: KeywordColumnWeights;
  private readonly tokenizer: string;
  private readonly maxEvidenceChars: number;
  private readonly evidenceRecurrence: number;
  private readonly boilerplateShare: number;
  private readonly boilerplateMinSkills: number;
  private stemsOfWords: WordStems | undefined;
  private readonly logger: Logger | undefined;

  /** Creates the tables when missing (idempotent); rebuilds the FTS index if the tokenizer changed. */
  constructor(
    private readonly db: Database.Database,
    options: KeywordIndexOptions = {},
  ) {
    this.fts = options.table ?? "skill_keywords";
    assertSqlIdentifier(this.fts, "keyword index table name");
    this.docs = `${this.fts}_docs`;
    this.audiences = `${this.fts}_audiences`;
    this.heard = `${this.fts}_heard`;
    this.weights = options.weights ?? DEFAULT_WEIGHTS;
    this.tokenizer = options.tokenizer ?? DEFAULT_TOKENIZER;
    if (!/^[A-Za-z0-9_ ]+$/.test(this.tokenizer)) throw new Error(`unsupported FTS5 tokenizer spec "${this.tokenizer}"`);
    this.maxEvidenceChars = options.maxEvidenceChars ?? 2_000;
    this.evidenceRecurrence = options.evidenceRecurrence ?? 2;
    this.boilerplateShare = options.boilerplateShare ?? 0.1;
    this.boilerplateMinSkills = options.boilerplateMinSkills ?? 10;
    if (!(Number.isInteger(this.evidenceRecurrence) && this.evidenceRecurrence >= 1))
      throw new RangeError(`evidenceRecurrence must be an integer ≥ 1, got ${this.evidenceRecurrence}`);
    if (!(this.boilerplateShare > 0 && this.boilerplateShare <= 1))
      throw new RangeError(`boilerplateShare must be in (0, 1], got ${this.boilerplateShare}`);
    if (!(this.boilerplateMinSkills >= 1)) throw new RangeError(`boilerplateMinSkills must be ≥ 1, got ${this.boilerplateMinSkills}`);
    this.logger = options.logger;
    withSqlite("routing index", "create the keyword index", () => this.createSchema());
  }

  /** Inserts or replaces documents by name. */
  upsert(documents: readonly KeywordDocument[]): void {
    if (documents.length === 0) return;
    withSqlite("routing index", "index skill keywords", () => {
      const upsert = this.db.prepare(
        `INSERT INTO ${this.docs} (name, name_tokens, description, heard, evidence, owner, visibility, audience, status)
         VALUES (@name, @nameTokens, @description, coalesce(@heard, ''), coalesce(@evidence, ''), @owner, @visibility, @audience, @status)
         ON CONFLICT (name) DO UPDATE SET
           name_tokens = excluded.name_tokens,
           description = excluded.description,
           heard = coalesce(@heard, heard),
           evidence = coalesce(@evidence, evidence),
           owner = excluded.owner,
           visibility = excluded.visibility,
           audience = excluded.audience,
           status = excluded.status`,
      );
      const idOf = this.db.prepare(`SELECT id FROM ${this.docs} WHERE name = ?`);
      const forget = this.db.prepare(`DELETE FROM ${this.audiences} WHERE doc_id = ?`);
      const add = this.db.prepare(`INSERT OR IGNORE INTO ${this.audiences} (audience, doc_id) VALUES (?, ?)`);
      const setGranted = this.db.prepare(`UPDATE ${this.docs} SET granted = ? WHERE id = ?`);
      this.db.transaction(() => {
        for (const document of documents) {
          const heard = document.evidence === undefined ? null : capEvidence(document.evidence, this.maxEvidenceChars);
          upsert.run({
            name: document.name,
            nameTokens: nameWords(document.name).join(" "),
            description: document.description,
            heard,
            evidence: heard === null ? null : this.evidenceColumn(heard),
            owner: document.owner,
            visibility: document.visibility,
            audience: audiencesOf(document)[0] ?? audienceOf(document.owner, document.visibility),
            status: document.status,
          });
          const { id } = idOf.get(document.name) as { id: number };
          forget.run(id);
          // The first audience is the row's own column; only grantees' go to the side table.
          const [, ...granted] = audiencesOf(document);
          for (const audience of granted) add.run(audience, id);
          setGranted.run(granted.length, id);
        }
      })();
    });
  }

  /** Removes documents by name; unknown names are ignored. */
  remove(names: readonly string[]): void {
    if (names.length === 0) return;
    withSqlite("routing index", "remove skill keywords", () => {
      const remove = this.db.prepare(`DELETE FROM ${this.docs} WHERE name = ? RETURNING id`);
      const forget = this.db.prepare(`DELETE FROM ${this.audiences} WHERE doc_id = ?`);
      this.db.transaction(() => {
        for (const name of names) {
          const removed = remove.get(name) as { id: number } | undefined;
          if (removed) forget.run(removed.id);
        }
      })();
    });
  }

  /**
   * Appends one credited query to a skill's evidence (routing that learns), skipping a query it
   * already holds. Returns false when the skill is not indexed.
   */
  addEvidence(name: string, query: string): boolean {
    const text = query.replace(/\s+/g, " ").trim();
    return withSqlite("routing index", "add routing evidence", () =>
      this.db.transaction(() => {
        const row = this.db.prepare(`SELECT heard FROM ${this.docs} WHERE name = ?`).get(name) as { heard: string } | undefined;
        if (!row) return false;
        const entries = row.heard === "" ? [] : row.heard.split("\n");
        if (text === "" || entries.some((entry) => entry.toLowerCase() === text.toLowerCase())) return true;
        const heard = capEvidence([...entries, text], this.maxEvidenceChars);
        this.db.prepare(`UPDATE ${this.docs} SET heard = ?, evidence = ? WHERE name = ?`).run(heard, this.evidenceColumn(heard), name);
        return true;
      })(),
    );
  }

  /**
   * Replaces a document's evidence lines; false when it is not indexed. The routing gate uses it
   * inside a savepoint it rolls back, to rank a query as if no skill held it as evidence
   * (docs/routing.md#the-routing-gate).
   */
  replaceEvidence(name: string, evidence: readonly string[]): boolean {
    const heard = capEvidence(evidence, this.maxEvidenceChars);
    return withSqlite(
      "routing index",
      "replace routing evidence",
      () =>
        this.db.prepare(`UPDATE ${this.docs} SET heard = ?, evidence = ? WHERE name = ?`).run(heard, this.evidenceColumn(heard), name)
          .changes > 0,
    );
  }

  /** A skill's evidence queries as they came, oldest first (for explanations, the routing gate and tests). */
  evidence(name: string): string[] {
    const row = withSqlite("routing index", "read routing evidence", () =>
      this.db.prepare(`SELECT heard FROM ${this.docs} WHERE name = ?`).get(name),
    ) as { heard: string } | undefined;
    return row && row.heard !== "" ? row.heard.split("\n") : [];
  }

  /** What of a skill's evidence its document matches: the words that recur, one line per query. */
  matchedEvidence(name: string): string[] {
    const row = withSqlite("routing index", "read routing evidence", () =>
      this.db.prepare(`SELECT evidence FROM ${this.docs} WHERE name = ?`).get(name),
    ) as { evidence: string } | undefined;
    return row && row.evidence !== "" ? row.evidence.split("\n") : [];
  }

  /** The best BM25 matches for free text, best first. Any text is accepted; no words, no hits. */
  search(query: string, options: KeywordSearchOptions): KeywordHit[] {
    const limit = Math.floor(options.limit);
    // `!(limit > 0)` so that NaN also means "no hits" instead of reaching SQL or the wire.
    if (!(limit > 0) || filterMatchesNothing(options.filter)) return [];
    const terms = ftsQueryTerms(query);
    const boilerplate = this.boilerplate(terms);
    const match = ftsMatchExpression(terms, (term) => (boilerplate.has(term) ? DESCRIBING_COLUMNS : undefined));
    if (match === undefined) return [];
    const clauses: string[] = [];
    const params: string[] = [];
    const allow = (column: string, values: readonly string[] | undefined): void => {
      if (values === undefined) return;
      clauses.push(`AND d.${column} IN (${values.map(() => "?").join(", ")})`);
      params.push(...values);
    };
    allow("status", options.filter?.statuses);
    allow("owner", options.filter?.owners);
    allow("visibility", options.filter?.visibility);
    const audiences = options.filter?.audiences;
    if (audiences !== undefined) {
      // Any of the document's audiences in the allowlist, inside the same statement
      // (docs/routing.md#scoping): its own column (owner's, or public), else, for a document with
      // grants only, an indexed lookup of its grantees' audiences.
      const list = audiences.map(() => "?").join(", ");
      clauses.push(
        `AND (d.audience IN (${list}) OR (d.granted > 0 AND EXISTS (SELECT 1 FROM ${this.audiences} a WHERE a.doc_id = d.id AND a.audience IN (${list}))))`,
      );
      params.push(...audiences, ...audiences);
    }
    const { name, description, evidence } = this.weights;
    const rows = withSqlite("routing index", "search skill keywords", () =>
      this.db
        .prepare(
          // bm25() is negative (more negative = better), so ascending order is best first.
          `SELECT d.name AS id, bm25(${this.fts}, ?, ?, ?) AS rank
             FROM ${this.fts} JOIN ${this.docs} d ON d.id = ${this.fts}.rowid
            WHERE ${this.fts} MATCH ? ${clauses.join(" ")}
            ORDER BY rank, d.name
            LIMIT ?`,
        )
        .all(name, description, evidence, match, ...params, limit),
    ) as Array<{ id: string; rank: number }>;
    return rows.map((row) => ({ id: row.id, score: -row.rank }));
  }

  count(): number {
    return withSqlite("routing index", "count skill keywords", () => {
      const row = this.db.prepare(`SELECT count(*) AS n FROM ${this.docs}`).get() as { n: number };
      return row.n;
    });
  }

  /** Empties the index, for a rebuild from the registry. */
  clear(): void {
    withSqlite("routing index", "clear the keyword index", () =>
      this.db.transaction(() => {
        this.db.prepare(`DELETE FROM ${this.docs}`).run();
        this.db.prepare(`DELETE FROM ${this.audiences}`).run();
      })(),
    );
  }

  private createSchema(): void {
    const { db, fts, docs } = this;
    db.transaction(() => {
      db.exec(
        `CREATE TABLE IF NOT EXISTS ${docs} (
           id INTEGER PRIMARY KEY,
           name TEXT NOT NULL UNIQUE,
           name_tokens TEXT NOT NULL,
           description TEXT NOT NULL,
           heard TEXT NOT NULL DEFAULT '',
           evidence TEXT NOT NULL DEFAULT '',
           owner TEXT NOT NULL,
           visibility TEXT NOT NULL,
           audience TEXT NOT NULL DEFAULT '',
           status TEXT NOT NULL,
           granted INTEGER NOT NULL DEFAULT 0
         )`,
      );
      this.addAudienceColumn();
      const columns = db.prepare("SELECT name FROM pragma_table_info(?)").all(docs) as Array<{ name: string }>;
      // A table from before grants: no document has any yet.
      if (!columns.some((column) => column.name === "granted"))
        db.exec(`ALTER TABLE ${docs} ADD COLUMN granted INTEGER NOT NULL DEFAULT 0`);
      // Before the FTS tables are touched: the update it makes keeps the existing index in step.
      this.addHeardColumn(columns);
      db.exec(
        `CREATE TABLE IF NOT EXISTS ${this.audiences} (audience TEXT NOT NULL, doc_id INTEGER NOT NULL, PRIMARY KEY (audience, doc_id)) STRICT;
         CREATE INDEX IF NOT EXISTS ${this.audiences}_by_doc ON ${this.audiences} (doc_id, audience);`,
      );
      const existing = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(fts) as
        { sql: string } | undefined;
      const wanted = `tokenize = '${this.tokenizer}'`;
      const rebuild = existing !== undefined && !existing.sql.includes(wanted);
      if (rebuild) {
        this.logger?.info({ table: fts, tokenizer: this.tokenizer }, "tokenizer changed; rebuilding the keyword index");
        // Which words recur depends on the stems, so the evidence column is recomputed first,
        // while the triggers still update the index they were written for.
        this.refreshEvidenceColumn();
        db.exec(`DROP TABLE ${fts}`);
      }
      // External content: FTS5 reads the text from the docs table, the triggers keep it in step.
      db.exec(
        `CREATE VIRTUAL TABLE IF NOT EXISTS ${fts} USING fts5(
           name_tokens, description, evidence,
           content = '${docs}', content_rowid = 'id',
           ${wanted}
         )`,
      );
      db.exec(
        `CREATE TRIGGER IF NOT EXISTS ${docs}_ai AFTER INSERT ON ${docs} BEGIN
           INSERT INTO ${fts} (rowid, name_tokens, description, evidence)
           VALUES (new.id, new.name_tokens, new.description, new.evidence);
         END;
         CREATE TRIGGER IF NOT EXISTS ${docs}_ad AFTER DELETE ON ${docs} BEGIN
           INSERT INTO ${fts} (${fts}, rowid, name_tokens, description, evidence)
           VALUES ('delete', old.id, old.name_tokens, old.description, old.evidence);
         END;
         CREATE TRIGGER IF NOT EXISTS ${docs}_au AFTER UPDATE OF name_tokens, description, evidence ON ${docs} BEGIN
           INSERT INTO ${fts} (${fts}, rowid, name_tokens, description, evidence)
           VALUES ('delete', old.id, old.name_tokens, old.description, old.evidence);
           INSERT INTO ${fts} (rowid, name_tokens, description, evidence)
           VALUES (new.id, new.name_tokens, new.description, new.evidence);
         END;
         CREATE INDEX IF NOT EXISTS ${docs}_status ON ${docs} (status);
         CREATE INDEX IF NOT EXISTS ${docs}_heard ON ${docs} (id) WHERE heard != '';`,
      );
      if (rebuild) db.exec(`INSERT INTO ${fts} (${fts}) VALUES ('rebuild')`);
      this.createHeardIndex(wanted);
    })();
  }

  /**
   * The FTS5 index of `heard` (one column, the same tokenizer), kept in step by triggers of its
   * own; created and filled from the documents when missing or when the tokenizer changed.
   */
  private createHeardIndex(tokenize: string): void {
    const { db, docs, heard } = this;
    const existing = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(heard) as
      { sql: string } | undefined;
    const fill = existing === undefined || !existing.sql.includes(tokenize);
    if (existing !== undefined && fill) db.exec(`DROP TABLE ${heard}`);
    db.exec(
      `CREATE VIRTUAL TABLE IF NOT EXISTS ${heard} USING fts5(heard, content = '${docs}', content_rowid = 'id', ${tokenize});
       CREATE TRIGGER IF NOT EXISTS ${docs}_heard_ai AFTER INSERT ON ${docs} BEGIN
         INSERT INTO ${heard} (rowid, heard) VALUES (new.id, new.heard);
       END;
       CREATE TRIGGER IF NOT EXISTS ${docs}_heard_ad AFTER DELETE ON ${docs} BEGIN
         INSERT INTO ${heard} (${heard}, rowid, heard) VALUES ('delete', old.id, old.heard);
       END;
       CREATE TRIGGER IF NOT EXISTS ${docs}_heard_au AFTER UPDATE OF heard ON ${docs} BEGIN
         INSERT INTO ${heard} (${heard}, rowid, heard) VALUES ('delete', old.id, old.heard);
         INSERT INTO ${heard} (rowid, heard) VALUES (new.id, new.heard);
       END;`,
    );
    if (fill) db.exec(`INSERT INTO ${heard} (${heard}) VALUES ('rebuild')`);
  }

  /**
   * Upgrades a docs table from before `heard`, whose `evidence` held the evidence queries whole:
   * they move to `heard`, and `evidence` keeps their recurring words.
   */
  private addHeardColumn(columns: ReadonlyArray<{ name: string }>): void {
    if (columns.some((column) => column.name === "heard")) return;
    this.db.exec(`ALTER TABLE ${this.docs} ADD COLUMN heard TEXT NOT NULL DEFAULT ''`);
    this.db.exec(`UPDATE ${this.docs} SET heard = evidence`);
    const holders = this.refreshEvidenceColumn();
    this.logger?.info({ table: this.docs, holders }, "kept the evidence queries whole beside their recurring words in the keyword index");
  }

  /** Recomputes every document's evidence column from its evidence queries; returns how many hold any. */
  private refreshEvidenceColumn(): number {
    const rows = this.db.prepare(`SELECT id, heard FROM ${this.docs} WHERE heard != ''`).all() as Array<{ id: number; heard: string }>;
    const update = this.db.prepare(`UPDATE ${this.docs} SET evidence = ? WHERE id = ?`);
    for (const row of rows) update.run(this.evidenceColumn(row.heard), row.id);
    return rows.length;
  }

  /**
   * Upgrades a docs table from before `audience`: adds the column and fills it from owner and
   * visibility, so the documents are searchable with an `audiences` filter at once.
   */
  private addAudienceColumn(): void {
    const { db, docs } = this;
    const columns = db.prepare("SELECT name FROM pragma_table_info(?)").all(docs) as Array<{ name: string }>;
    if (columns.some((column) => column.name === "audience")) return;
    db.exec(`ALTER TABLE ${docs} ADD COLUMN audience TEXT NOT NULL DEFAULT ''`);
    const fill = db.prepare(`UPDATE ${docs} SET audience = ? WHERE owner = ? AND visibility = ?`);
    const pairs = db.prepare(`SELECT DISTINCT owner, visibility FROM ${docs}`).all() as Array<{ owner: string; visibility: string }>;
    for (const { owner, visibility } of pairs) fill.run(audienceOf(owner, visibility), owner, visibility);
    this.logger?.info({ table: docs, documents: this.count() }, "added the audience column to the keyword index");
  }

  /**
   * The query terms in the evidence of more than {@link KeywordIndexOptions.boilerplateShare} of the
   * skills holding evidence (taken of at least {@link KeywordIndexOptions.boilerplateMinSkills}),
   * counted over every document whatever its status or owner, as BM25's document frequencies are.
   */
  private boilerplate(terms: readonly string[]): Set<string> {
    const found = new Set<string>();
    if (terms.length === 0 || this.boilerplateShare >= 1) return found;
    withSqlite("routing index", "count evidence words", () => {
      const holders = (this.db.prepare(`SELECT count(*) AS n FROM ${this.docs} WHERE heard != ''`).get() as { n: number }).n;
      // Fewer holders than this cannot make any word boilerplate: skip the per-term counts.
      const most = Math.floor(this.boilerplateShare * Math.max(holders, this.boilerplateMinSkills));
      if (holders <= most) return;
      // Counting stops one past the bound: whether a word is boilerplate needs no more.
      const using = this.db.prepare(`SELECT count(*) AS n FROM (SELECT 1 FROM ${this.heard} WHERE ${this.heard} MATCH ? LIMIT ?)`);
      for (const term of terms) if ((using.get(`"${term}"`, most + 1) as { n: number }).n > most) found.add(term);
    });
    return found;
  }

  /** The evidence column's text for newline-joined evidence queries: their recurring words. */
  private evidenceColumn(heard: string): string {
    if (heard === "") return "";
    this.stemsOfWords ??= new WordStems(this.tokenizer);
    return recurringWords(heard.split("\n"), this.evidenceRecurrence, this.stemsOfWords).join("\n");
  }
}
