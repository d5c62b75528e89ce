/**
 * The plain BM25 baseline of tool retrieval, computed in the same run as what it is compared
 * with: a tool's document is its name split on `_` and `-` plus its description; tokens are
 * lowercase `[a-z0-9]+` runs, no stemming, no stop words; Okapi BM25 with k1 = 1.2, b = 0.75
 * and Lucene's idf ln(1 + (N − df + 0.5) / (df + 0.5)); each distinct query term counts once;
 * ties keep file order. (The same definition as the development set's own bm25_baseline.py.)
 */
const K1 = 1.2;
const B = 0.75;

function tokens(text: string): string[] {
  return text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
}

/** A BM25 index over tools; `rank` returns every tool's name, best first. */
export function bm25Baseline(tools: ReadonlyArray<{ name: string; description: string }>): { rank(query: string): string[] } {
  const docs = tools.map((tool) => tokens(`${tool.name.split(/[_-]/).join(" ")} ${tool.description}`));
  const averageLength = docs.reduce((sum, doc) => sum + doc.length, 0) / Math.max(1, docs.length);
  const frequencies = docs.map((doc) => {
    const counts = new Map<string, number>();
    for (const token of doc) counts.set(token, (counts.get(token) ?? 0) + 1);
    return counts;
  });
  const documentFrequency = new Map<string, number>();
  for (const counts of frequencies)
    for (const token of counts.keys()) documentFrequency.set(token, (documentFrequency.get(token) ?? 0) + 1);
  const idf = (token: string): number => {
    const df = documentFrequency.get(token) ?? 0;
    return Math.log(1 + (docs.length - df + 0.5) / (df + 0.5));
  };
  return {
    rank(query) {
      const terms = [...new Set(tokens(query))];
      const scored = frequencies.map((counts, index) => {
        const length = docs[index]?.length ?? 0;
        let score = 0;
        for (const term of terms) {
          const tf = counts.get(term) ?? 0;
          if (tf > 0) score += (idf(term) * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * length) / averageLength));
        }
        return { index, score };
      });
      scored.sort((x, y) => y.score - x.score || x.index - y.index);
      return scored.map(({ index }) => tools[index]?.name ?? "");
    },
  };
}
