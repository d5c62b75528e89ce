/**
 * Near-exact duplicates (docs/playbook.md#duplicates): the same lesson written again, in other
 * case, punctuation or a word's order, is merged into the first (frequency + 1) instead of stored twice.
 */

/** Word sets at or above this Jaccard similarity, for the trigger and for the correct pattern, are the same lesson. */
export const NEAR_DUPLICATE_JACCARD = 0.9;

function words(text: string): string[] {
  return (
    text
      .normalize("NFKC")
      .toLowerCase()
      .match(/[\p{L}\p{N}_]+/gu) ?? []
  );
}

/** Trigger and correct pattern, case-folded, punctuation and spacing ignored: equal keys are exact duplicates. */
export function duplicateKey(trigger: string, correctPattern: string): string {
  return `${words(trigger).join(" ")}\n${words(correctPattern).join(" ")}`;
}

/** |A ∩ B| / |A ∪ B| of the two texts' word sets; 1 for two texts without words. */
export function wordJaccard(a: string, b: string): number {
  const left = new Set(words(a));
  const right = new Set(words(b));
  if (left.size === 0 && right.size === 0) return 1;
  let shared = 0;
  for (const word of left) if (right.has(word)) shared++;
  return shared / (left.size + right.size - shared);
}

/** True when two lessons are the same lesson: equal keys, or both texts at least {@link NEAR_DUPLICATE_JACCARD} alike. */
export function isNearDuplicate(
  a: { readonly trigger: string; readonly correctPattern: string },
  b: { readonly trigger: string; readonly correctPattern: string },
): boolean {
  if (duplicateKey(a.trigger, a.correctPattern) === duplicateKey(b.trigger, b.correctPattern)) return true;
  return (
    wordJaccard(a.trigger, b.trigger) >= NEAR_DUPLICATE_JACCARD && wordJaccard(a.correctPattern, b.correctPattern) >= NEAR_DUPLICATE_JACCARD
  );
}
