import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../errors/index.js";
import { MAX_DECLARED_SECRETS, validateSecretNames } from "./secret-names.js";

describe("validateSecretNames (docs/security.md#declaring-and-delivering)", () => {
  it("keeps good names in the order given", () => {
    expect(validateSecretNames("secrets", ["WEATHER_API_KEY", "_X", "A1"])).toEqual(["WEATHER_API_KEY", "_X", "A1"]);
    expect(validateSecretNames("secrets", [])).toEqual([]);
    expect(validateSecretNames("secrets", [`A${"B".repeat(63)}`])).toHaveLength(1);
  });

  it.each([
    [["lower"], /^secrets\[0\]: "lower" is not a secret name/],
    [["OK", "1ST"], /^secrets\[1\]: "1ST" is not a secret name/],
    [["WITH-DASH"], /^secrets\[0\]: .*not a secret name/],
    [[`A${"B".repeat(64)}`], /^secrets\[0\]: .*not a secret name/],
    [[""], /^secrets\[0\]: "" is not a secret name/],
    [["KEY", "OTHER", "KEY"], /^secrets\[2\]: "KEY" is declared twice/],
    [["PATH"], /^secrets\[0\]: "PATH" is reserved/],
    [["PYTHONPATH"], /^secrets\[0\]: "PYTHONPATH" is reserved/],
    [["LD_PRELOAD"], /^secrets\[0\]: "LD_PRELOAD" is reserved/],
  ])("refuses %j, naming the entry", (names, message) => {
    let caught: unknown;
    try {
      validateSecretNames("secrets", names);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidArgumentError);
    expect((caught as Error).message).toMatch(message);
  });

  it(`refuses more than ${MAX_DECLARED_SECRETS}`, () => {
    const names = Array.from({ length: MAX_DECLARED_SECRETS + 1 }, (_, i) => `S${i}`);
    expect(() => validateSecretNames("secrets", names.slice(0, -1))).not.toThrow();
    expect(() => validateSecretNames("secrets", names)).toThrow(/^secrets: declares 33 secrets; at most 32 may be declared/);
  });
});
