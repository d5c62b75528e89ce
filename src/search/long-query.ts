import { InvalidArgumentError } from "../errors/index.js";

/**
 * Limits of a search query (RouteSkills, GetPlaybookContext), in characters (UTF-16 code units):
 * docs/routing.md#long-queries.
 */
export const SEARCH_QUERY_LIMITS = {
  /** The longest query accepted: an agent passes the user's whole message. Longer is INVALID_ARGUMENT. */
  acceptedChars: 32_000,
  /**
   * A query up to this long is searched whole, as it always was (routing quality was measured on
   * such queries); of a longer one, the first and the last half of this are searched.
   */
  searchedChars: 2_000,
  /**
   * The searched parts of a longer query are cut into pieces of at most this many characters, each
   * searched on its own: about what the embedder reads whole (MiniLM's window is 256 word pieces;
   * 500 characters of English prose or of a log fit in it), and well within the 64 distinct terms
   * keyword search uses.
   */
  pieceChars: 500,
} as const;

/** What is searched for a query, and the warning that says it was cut (absent when it was not). */
export interface SearchedQuery {
  /** Searched each like a query of its own: the query itself, or pieces of its beginning and its end. */
  readonly pieces: readonly string[];
  /** The pieces joined by line breaks: what a route records as its query. */
  readonly text: string;
  readonly warning: string | undefined;
}

/** A cut may move back this far to land on whitespace instead of inside a word. */
const WORD_SLACK = 40;

/**
 * What to search for `query` (already trimmed, not empty). Up to
 * {@link SEARCH_QUERY_LIMITS.searchedChars} it is the query itself; a longer one is searched on its
 * beginning and its end, half the budget each, cut at whitespace into pieces of at most
 * {@link SEARCH_QUERY_LIMITS.pieceChars}: a user's message usually states the task before or after
 * whatever it pastes (a log, a file, a thread), seldom in the middle, and a piece that holds the
 * task is not drowned by the pasted text around it.
 *
 * @throws {@link InvalidArgumentError} (field `field`) when the query is longer than
 *   {@link SEARCH_QUERY_LIMITS.acceptedChars}.
 */
export function searchedQuery(query: string, field = "query"): SearchedQuery {
  const { acceptedChars, searchedChars, pieceChars } = SEARCH_QUERY_LIMITS;
  if (query.length > acceptedChars) {
    throw new InvalidArgumentError(field, `is ${query.length} characters; the limit is ${acceptedChars}`);
  }
  if (query.length <= searchedChars) return { pieces: [query], text: query, warning: undefined };
  const half = searchedChars / 2;
  const head = headOf(query, half);
  const tail = tailOf(query, half);
  const pieces = [...piecesOf(head, pieceChars), ...piecesOf(tail, pieceChars)];
  return {
    pieces,
    text: pieces.join("\n"),
    warning:
      `${field} is ${query.length} characters, more than the ${searchedChars} searched whole: ` +
      `searched on its first ${head.length} and last ${tail.length} characters (docs/routing.md#long-queries)`,
  };
}

/** `text` cut at whitespace into pieces of at most `chars` characters. */
function piecesOf(text: string, chars: number): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > chars) {
    const piece = headOf(rest, chars);
    if (piece !== "") pieces.push(piece);
    rest = rest.slice(Math.max(piece.length, 1)).trimStart();
  }
  if (rest !== "") pieces.push(rest);
  return pieces;
}

/** At most `chars` characters from the start, ending before whitespace when there is some near the cut. */
function headOf(text: string, chars: number): string {
  let cut = chars;
  const space = text.slice(chars - WORD_SLACK, chars + 1).search(/\s\S*$/);
  if (space >= 0) cut = chars - WORD_SLACK + space;
  // Never end on half a surrogate pair.
  if (/[\uD800-\uDBFF]/.test(text.charAt(cut - 1))) cut -= 1;
  return text.slice(0, cut).trimEnd();
}

/** At most `chars` characters from the end, starting after whitespace when there is some near the cut. */
function tailOf(text: string, chars: number): string {
  let start = text.length - chars;
  const space = text.slice(start - 1, start + WORD_SLACK).search(/\s/);
  if (space >= 0) start = start + space;
  if (/[\uDC00-\uDFFF]/.test(text.charAt(start))) start += 1;
  return text.slice(start).trimStart();
}
