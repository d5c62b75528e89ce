import { queryWords } from "./name-tokens.js";

/** More terms add cost but, on an OR query, almost no ranking signal. */
export const MAX_QUERY_TERMS = 64;
/** Longer "words" are pasted blobs (base64, hashes), never something a description contains. */
const MAX_TERM_LENGTH = 64;

/**
 * English function words dropped from queries: Lucene's default English stop set plus pronouns,
 * wh-words, auxiliaries and "please". Queries are conversational ("could you tell me what …") while
 * descriptions are terse, and in a registry of a few dozen skills a word like "this" or "my" sits
 * in one or two descriptions and earns a high IDF, outranking the words that carry the intent.
 * Content words only ever stay. Measured on the devbench (145 tools, 422 queries), keywords only:
 * recall@1 0.552 → 0.597, recall@5 0.756 → 0.815, MRR 0.647 → 0.685.
 */
export const QUERY_STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these they " +
    "this to was will with i me my we us our you your he she him his her its what which who whom how when where why " +
    "do does did can could would should please"
  ).split(" "),
);

/**
 * The words of arbitrary user text that a keyword search looks for: stop words dropped unless
 * nothing else is left, duplicates and terms longer than 64 characters dropped, at most `maxTerms`.
 * Words are runs of letters, digits and combining marks, so a word never holds a `"`.
 */
export function ftsQueryTerms(text: string, maxTerms: number = MAX_QUERY_TERMS): string[] {
  const words = queryWords(text);
  const content = words.filter((word) => !QUERY_STOP_WORDS.has(word));
  const terms: string[] = [];
  const seen = new Set<string>();
  for (const word of content.length > 0 ? content : words) {
    if (word.length > MAX_TERM_LENGTH || seen.has(word)) continue;
    seen.add(word);
    terms.push(word);
    if (terms.length >= maxTerms) break;
  }
  return terms;
}

/**
 * Turns arbitrary user text into an FTS5 MATCH expression that cannot be a syntax error.
 *
 * FTS5's query language gives meaning to `"`, `*`, `^`, `:`, `-`, `+`, parentheses and the bare
 * words AND, OR, NOT and NEAR; passing user text through raises "fts5: syntax error" on inputs
 * as ordinary as `don't` or `C++`. Instead every word ({@link ftsQueryTerms}) becomes a
 * double-quoted string, which FTS5 reads as a literal phrase, and the words are OR-ed so that
 * BM25, not boolean logic, ranks the skills: a query rarely uses every word of the description it
 * should find. Returns undefined when the text has no word at all (the caller answers with no hits).
 */
export function toFtsMatchQuery(text: string, maxTerms: number = MAX_QUERY_TERMS): string | undefined {
  return ftsMatchExpression(ftsQueryTerms(text, maxTerms));
}

/**
 * The MATCH expression of {@link toFtsMatchQuery} for terms of {@link ftsQueryTerms}. A term for
 * which `columnsOf` names columns is matched in those columns only (an FTS5 column filter,
 * `{a b} : "term"`); the names must be the table's own column names. Undefined for no terms.
 */
export function ftsMatchExpression(
  terms: readonly string[],
  columnsOf?: (term: string) => readonly string[] | undefined,
): string | undefined {
  if (terms.length === 0) return undefined;
  return terms
    .map((term) => {
      const columns = columnsOf?.(term);
      return columns === undefined ? `"${term}"` : `{${columns.join(" ")}} : "${term}"`;
    })
    .join(" OR ");
}
