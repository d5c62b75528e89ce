import { describe, expect, it } from "vitest";
import { guardTokens, sharedNgram } from "./generalization-guard.js";

const challenge = "Parse the file orders_2024.csv and return the total of the amount column for customer 4711.";

describe("generalization guard", () => {
  it("finds a copied run of 6 tokens, whatever the case and punctuation", () => {
    expect(sharedNgram("Always RETURN the total of the amount column, carefully", challenge, 6)).toBe("return the total of the amount");
  });

  it("lets a run of 5 shared tokens through", () => {
    expect(sharedNgram("first return the total of the values", challenge, 6)).toBeUndefined();
    expect(sharedNgram("return the total of the", challenge, 6)).toBeUndefined();
  });

  it("catches copied fixture literals inside a longer text", () => {
    expect(sharedNgram("when asked about orders_2024.csv and return the total, sum it", challenge, 6)).toBe(
      "orders_2024 csv and return the total",
    );
  });

  it("tokenizes words and numbers, folding case and width", () => {
    expect(guardTokens("Ｆｕｌｌ-width, x=3.14!")).toEqual(["full", "width", "x", "3", "14"]);
  });

  it("has nothing to compare against an empty challenge", () => {
    expect(sharedNgram("a b c d e f g", "", 6)).toBeUndefined();
  });
});
