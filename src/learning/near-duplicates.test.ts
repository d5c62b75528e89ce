import { describe, expect, it } from "vitest";
import { WordEmbedder } from "../../test/support/word-embedder.js";
import type { DescribedSkill, NeighboursOf } from "../control/index.js";
import {
  codeShingles,
  DUPLICATE_CANDIDATES,
  isNearDuplicate,
  jaccard,
  NearDuplicateDetector,
  normalisedTokens,
} from "./near-duplicates.js";

/** Neighbours without an index: every skill of `library`, whatever the vector. */
function everyone(library: readonly DescribedSkill[]): NeighboursOf {
  return () => Promise.resolve(library);
}

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

/** A detector over bag-of-words vectors that records every batch of texts it embeds. */
function countingDetector(): { detector: NearDuplicateDetector; calls: string[][] } {
  const words = new WordEmbedder();
  const calls: string[][] = [];
  const detector = new NearDuplicateDetector({
    modelId: words.modelId,
    dimensions: words.dimensions,
    embed: (texts) => {
      calls.push([...texts]);
      return words.embed(texts);
    },
  });
  return { detector, calls };
}

describe("NearDuplicateDetector", () => {
  const counter =
    "import json, sys\nargs = json.loads(sys.argv[1])\nwords = args['text'].split()\nprint(json.dumps({'count': len(words)}))\n";
  const renamed = "import json, sys\np = json.loads(sys.argv[1])\nw = p['s'].split()\nprint(json.dumps({'n': len(w)}))\n";

  it("reads the code only of skills whose description comes close, and reports them", async () => {
    const detector = new NearDuplicateDetector(new WordEmbedder(), { description: 0.8, code: 0.5 });
    const library = new Map([
      ["word_count", { description: "count the words in a text", code: renamed }],
      ["word_total", { description: "count the words in a text quickly", code: "print(1)\n" }],
      ["celsius", { description: "convert celsius temperature to fahrenheit", code: "print(2)\n" }],
      ["invoice", { description: "render an invoice as PDF for a customer", code: "print(3)\n" }],
    ]);
    const read: string[] = [];
    const similar = await detector.compare(
      { name: "counter", description: "count the words in a text", code: counter },
      everyone([...library].map(([name, { description }]) => ({ name, description }))),
      async (name) => {
        read.push(name);
        return library.get(name)?.code ?? "";
      },
    );
    expect(read.sort()).toEqual(["word_count", "word_total"]);
    expect(similar.map((s) => [s.name, s.nearDuplicate])).toEqual([
      ["word_count", true],
      ["word_total", false],
    ]);
    expect(similar[0]).toMatchObject({ descriptionSimilarity: 1, codeSimilarity: 1 });
  });

  it("reads nothing when no description comes close", async () => {
    const detector = new NearDuplicateDetector(new WordEmbedder());
    const similar = await detector.compare(
      { name: "counter", description: "count the words in a text", code: counter },
      everyone([{ name: "invoice", description: "render an invoice as PDF for a customer" }]),
      () => Promise.reject(new Error("no code should be read")),
    );
    expect(similar).toEqual([]);
  });

  it("embeds a description anticipated before the comparison once, and the comparison waits for it", async () => {
    const { detector, calls } = countingDetector();
    detector.anticipate("count the words in a text");
    const similar = await detector.compare(
      { name: "counter", description: "count the words in a text", code: counter },
      everyone([{ name: "word_count", description: "count the words in a text" }]),
      async () => renamed,
    );
    expect(similar.map((s) => s.name)).toEqual(["word_count"]);
    expect(calls.flat().filter((text) => text === "count the words in a text")).toHaveLength(1);
  });

  it("compares with the neighbours found for the new description's vector only, never with itself, and embeds only theirs", async () => {
    const { detector, calls } = countingDetector();
    const asked: Array<{ vector: Float32Array; limit: number }> = [];
    const neighbours: NeighboursOf = (vector, limit) => {
      asked.push({ vector, limit });
      return Promise.resolve([
        { name: "counter", description: "count the words in a text" },
        { name: "word_count", description: "count the words in a text" },
      ]);
    };
    const similar = await detector.compare(
      { name: "counter", description: "count the words in a text", code: counter },
      neighbours,
      async () => renamed,
    );
    expect(similar.map((s) => s.name)).toEqual(["word_count"]);
    expect(asked).toHaveLength(1);
    expect(asked[0]?.limit).toBe(DUPLICATE_CANDIDATES);
    const [mine] = await new WordEmbedder().embed(["count the words in a text"]);
    expect([...(asked[0]?.vector ?? [])]).toEqual([...(mine ?? [])]);
    expect(calls.flat()).toEqual(["count the words in a text"]);
  });
});
