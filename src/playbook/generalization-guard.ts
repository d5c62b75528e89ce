/**
 * The generalization guard (docs/playbook.md#gates): a lesson that repeats a run of the challenge's
 * own words restates the challenge or copies its fixtures instead of saying what to do next time.
 */

/** Words as the guard compares them: runs of letters, digits and `_`, case-folded. Punctuation and spacing never hide a copy. */
export function guardTokens(text: string): string[] {
  return (
    text
      .normalize("NFKC")
      .toLowerCase()
      .match(/[\p{L}\p{N}_]+/gu) ?? []
  ).slice();
}

/**
 * The first run of `n` consecutive tokens of `text` that also occurs in `source`, joined by
 * spaces; undefined when none does (and always when `text` has fewer than `n` tokens).
 */
export function sharedNgram(text: string, source: string, n: number): string | undefined {
  const tokens = guardTokens(text);
  if (tokens.length < n) return undefined;
  const grams = ngrams(guardTokens(source), n);
  if (grams.size === 0) return undefined;
  for (let i = 0; i + n <= tokens.length; i++) {
    const gram = tokens.slice(i, i + n).join(" ");
    if (grams.has(gram)) return gram;
  }
  return undefined;
}

function ngrams(tokens: readonly string[], n: number): Set<string> {
  const grams = new Set<string>();
  for (let i = 0; i + n <= tokens.length; i++) grams.add(tokens.slice(i, i + n).join(" "));
  return grams;
}
