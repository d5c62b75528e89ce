import { describe, expect, it } from "vitest";
import { isNearDuplicate, wordJaccard } from "./duplicates.js";

describe("near-exact duplicates", () => {
  it("treats case, punctuation and spacing as the same lesson", () => {
    expect(
      isNearDuplicate(
        { trigger: "When an API answers 429", correctPattern: "Back off, then retry." },
        { trigger: "when an api answers 429!", correctPattern: "back off then   retry" },
      ),
    ).toBe(true);
  });

  it("keeps lessons apart that share a trigger but not the advice", () => {
    expect(
      isNearDuplicate(
        { trigger: "When migrating a large table", correctPattern: "Run it in batches at night." },
        { trigger: "When migrating a large table", correctPattern: "Create indexes concurrently." },
      ),
    ).toBe(false);
  });

  it("measures word overlap as Jaccard similarity", () => {
    expect(wordJaccard("a b c d", "a b c e")).toBeCloseTo(3 / 5, 10);
    expect(wordJaccard("", "")).toBe(1);
  });
});
