import Database from "better-sqlite3";

/** Runs of letters, digits and combining marks, as the keyword index's tokenizer splits text. */
const WORD = /[\p{L}\p{N}\p{M}]+/gu;
/** Stems remembered per index; beyond this the memo starts over (words repeat across credited queries). */
const MEMO_LIMIT = 20_000;

/**
 * The stem of a word as an FTS5 tokenizer indexes it, read from a private in-memory database with
 * that tokenizer (`fts5vocab`), so "planned" and "planning" count as one word exactly where the
 * keyword index would match them as one. Private: nothing here runs inside the caller's
 * transactions or savepoints.
 */
export class WordStems {
  private readonly db: Database.Database;
  private readonly memo = new Map<string, string>();

  /** `tokenizer` is an FTS5 tokenizer spec the caller has validated (letters, digits, `_` and spaces). */
  constructor(tokenizer: string) {
    this.db = new Database(":memory:");
    this.db.exec(
      `CREATE VIRTUAL TABLE words USING fts5(word, tokenize = '${tokenizer}');
       CREATE VIRTUAL TABLE words_terms USING fts5vocab(words, 'instance');`,
    );
  }

  /** Each word's stem (its first token; a word the tokenizer keeps nothing of stands for itself). */
  of(words: Iterable<string>): Map<string, string> {
    const stems = new Map<string, string>();
    const unknown: string[] = [];
    for (const word of words) {
      const known = this.memo.get(word);
      if (known !== undefined) stems.set(word, known);
      else if (!stems.has(word)) {
        stems.set(word, word);
        unknown.push(word);
      }
    }
    if (unknown.length === 0) return stems;
    if (this.memo.size + unknown.length > MEMO_LIMIT) this.memo.clear();
    const insert = this.db.prepare("INSERT INTO words (rowid, word) VALUES (?, ?)");
    const read = this.db.prepare<[], { doc: number; term: string }>("SELECT doc, term FROM words_terms ORDER BY doc, offset");
    const found = this.db.transaction(() => {
      unknown.forEach((word, i) => insert.run(i + 1, word));
      const rows = read.all();
      this.db.exec("DELETE FROM words");
      return rows;
    })();
    const seen = new Set<number>();
    for (const { doc, term } of found) {
      if (seen.has(doc)) continue;
      seen.add(doc);
      stems.set(unknown[doc - 1] as string, term);
    }
    for (const word of unknown) this.memo.set(word, stems.get(word) as string);
    return stems;
  }
}

/**
 * What of a skill's credited queries its keyword document matches (docs/routing.md#what-evidence-counts-for):
 * in each line, the words (lowercased) whose stem recurs in at least `minLines` of the lines, in
 * their order; lines left with nothing are dropped. A word one credited query used once is as
 * likely its setting (a city, a date, a file name) as its ask; the words several queries for the
 * same skill share are what users call it.
 */
export function recurringWords(lines: readonly string[], minLines: number, stems: WordStems): string[] {
  const words = lines.map((line) => Array.from(line.matchAll(WORD), (match) => match[0].toLowerCase()));
  if (minLines <= 1) return words.map((line) => line.join(" ")).filter((line) => line !== "");
  const stemOf = stems.of(words.flat());
  const linesWith = new Map<string, number>();
  for (const line of words) {
    for (const stem of new Set(line.map((word) => stemOf.get(word) as string))) linesWith.set(stem, (linesWith.get(stem) ?? 0) + 1);
  }
  return words
    .map((line) => line.filter((word) => (linesWith.get(stemOf.get(word) as string) ?? 0) >= minLines).join(" "))
    .filter((line) => line !== "");
}

/** Keeps the newest evidence queries that fit `maxChars`, one query per line. */
export function capEvidence(entries: readonly string[], maxChars: number): string {
  const kept: string[] = [];
  let size = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = (entries[i] ?? "").replace(/\s+/g, " ").trim();
    if (entry === "") continue;
    if (size + entry.length + 1 > maxChars) break;
    kept.unshift(entry);
    size += entry.length + 1;
  }
  return kept.join("\n");
}
