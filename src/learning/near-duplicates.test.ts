import { describe, expect, it } from "vitest";
import { codeShingles, isNearDuplicate, jaccard, normalisedTokens } from "./near-duplicates.js";

describe("code similarity", () => {
  it("normalises local names, strings and numbers but keeps calls and attributes", () => {
    expect(normalisedTokens('total = len(items) + 1  # count\nname = "x".upper()')).toEqual([
      "ID",
      "=",
      "len",
      "(",
      "ID",
      ")",
      "+",
      "NUM",
      "ID",
      "=",
      "STR",
      ".",
      "upper",
      "(",
      ")",
    ]);
  });

  it("sees a renamed copy as the same code and a different algorithm as different", () => {
    const a = "import json, sys\nargs = json.loads(sys.argv[1])\nwords = args['text'].split()\nprint(json.dumps({'count': len(words)}))\n";
    const renamed = "import json, sys\np = json.loads(sys.argv[1])\nw = p['s'].split()\nprint(json.dumps({'n': len(w)}))\n";
    const other = "import json, sys\nargs = json.loads(sys.argv[1])\nprint(json.dumps({'sum': sum(float(x) for x in args['values'])}))\n";
    expect(jaccard(codeShingles(a), codeShingles(renamed))).toBe(1);
    expect(jaccard(codeShingles(a), codeShingles(other))).toBeLessThan(0.5);
  });

  it("needs both similarities at their thresholds", () => {
    const t = { description: 0.8, code: 0.15 };
    expect(isNearDuplicate(0.9, 0.2, t)).toBe(true);
    expect(isNearDuplicate(0.9, 0.1, t)).toBe(false);
    expect(isNearDuplicate(0.7, 0.9, t)).toBe(false);
  });
});
