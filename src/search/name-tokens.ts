/**
 * Word splitting shared by the keyword index's documents and its queries, so that a skill named
 * `GetUserToken` or `tmdb_get_movie_credits` is found by "get the user token" and by
 * "movie credits". Without it the FTS tokenizer sees one opaque word per name (the devbench's
 * diagnostic 2: recall@1 0.38 → 0.51 once CamelCase names are split).
 */

/** Runs of letters, digits and combining marks: everything else separates words. */
const WORD = /[\p{L}\p{N}\p{M}]+/gu;
/** `userToken` → `user|Token`, `get2FA` → `get2|FA`. */
const LOWER_TO_UPPER = /(?<=[\p{Ll}\p{N}])(?=\p{Lu})/gu;
/** `HTTPServer` → `HTTP|Server`: the last capital of an acronym starts the next word. */
const ACRONYM_END = /(?<=\p{Lu})(?=\p{Lu}\p{Ll})/gu;

/** The camelCase parts of one word, e.g. `GetUserToken` → `["Get", "User", "Token"]`. */
export function camelParts(word: string): string[] {
  return word
    .replace(LOWER_TO_UPPER, " ")
    .replace(ACRONYM_END, " ")
    .split(" ")
    .filter((part) => part.length > 0);
}

/**
 * A skill name as lowercase words: split on `_`, `-` and any other punctuation, then on
 * camelCase and acronym boundaries. `tmdb_get_movie_movie_id` → `tmdb get movie movie id`,
 * `GetUserToken` → `get user token`, `parseHTTPHeaders` → `parse http headers`.
 */
export function nameWords(name: string): string[] {
  const words: string[] = [];
  for (const [word] of name.matchAll(WORD)) {
    for (const part of camelParts(word)) words.push(part.toLowerCase());
  }
  return words;
}

/**
 * The words of free text as a query should look for them: each word lowercased, plus its camelCase
 * parts when it has several. The whole word still matches descriptions (where the tokenizer does
 * not split `iPhone`), the parts match split names.
 */
export function queryWords(text: string): string[] {
  const words: string[] = [];
  for (const [word] of text.matchAll(WORD)) {
    words.push(word.toLowerCase());
    const parts = camelParts(word);
    if (parts.length > 1) for (const part of parts) words.push(part.toLowerCase());
  }
  return words;
}
