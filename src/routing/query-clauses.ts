/**
 * Multi-intent queries ("book a flight and then find a hotel near it") need one tool per intent.
 * A whole-query embedding lands between the two intents and can rank neither tool first, so
 * routing also ranks each clause alone and merges the lists (docs/routing.md#multi-intent-queries).
 * Splitting is plain text rules, no model: sentence ends, semicolons, and coordinating phrases that
 * join two actions ("and then", "then", "after that", "and also", ", and", "and").
 */

/** A clause shorter than this (in words) is not an intent of its own ("salt and pepper"). */
export const MIN_CLAUSE_WORDS = 3;
/** At most this many clauses are ranked apart; the rest stay in the last one. */
export const MAX_CLAUSES = 4;

// A sentence end is a full stop after a word of three or more letters ("Dr. Smith" is not one).
const BOUNDARY =
  /(?:(?<=\p{L}{3})[.!?]+\s+|\s*;\s*|,?\s+(?:and\s+then|and\s+afterwards|and\s+after\s+that|after\s+that|afterwards|and\s+also|then|and|also|plus)\s+)/iu;

/**
 * The clauses of a query, each with at least {@link MIN_CLAUSE_WORDS} words; a single-intent query
 * gives an empty list (there is nothing to rank apart). Pieces too short to stand alone are joined
 * to their neighbour, so "find tom and jerry cartoons" stays one clause.
 */
export function splitClauses(query: string): string[] {
  const pieces = query.split(new RegExp(BOUNDARY.source, "giu")).map((piece) => piece.trim());
  const clauses: string[] = [];
  for (const piece of pieces) {
    if (piece === "") continue;
    const previous = clauses.at(-1);
    if (previous !== undefined && (wordCount(piece) < MIN_CLAUSE_WORDS || wordCount(previous) < MIN_CLAUSE_WORDS)) {
      clauses[clauses.length - 1] = `${previous} ${piece}`;
    } else clauses.push(piece);
  }
  if (clauses.length < 2) return [];
  const kept = clauses.slice(0, MAX_CLAUSES - 1);
  const rest = clauses.slice(MAX_CLAUSES - 1);
  if (rest.length > 0) kept.push(rest.join(" "));
  return kept;
}

function wordCount(text: string): number {
  return text.split(/\s+/).filter((word) => /[\p{L}\p{N}]/u.test(word)).length;
}
