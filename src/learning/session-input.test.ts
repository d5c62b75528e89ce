import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../errors/index.js";
import { jsonNesting, parseSession, SESSION_FIELD_LIMITS } from "./session-input.js";

const limits = { maxSessionCalls: 5, maxSessionBytes: 200 };
const call = (tool: string, args: unknown = {}) => ({ tool, arguments: JSON.stringify(args) });

/** `{"a":{"a":…}}` nested `depth` objects deep. */
const nestedObjects = (depth: number): string => `${'{"a":'.repeat(depth - 1)}{}${"}".repeat(depth - 1)}`;

describe("a session's limits", () => {
  it("measures nesting by one pass over the text: brackets in strings and escaped quotes do not count", () => {
    expect(jsonNesting("3")).toBe(0);
    expect(jsonNesting("{}")).toBe(1);
    expect(jsonNesting('{"a": [1, {"b": []}]}')).toBe(4);
    expect(jsonNesting('{"a": "[[[{{{", "b": "\\"[[["}')).toBe(1);
    // Far deeper than any recursion could go: the scan has no stack to overflow.
    expect(jsonNesting("[".repeat(1_000_000) + "]".repeat(1_000_000))).toBe(1_000_000);
    expect(jsonNesting("[".repeat(1_000_000), 64)).toBe(65);
  });

  it("accepts arguments nested exactly to the depth limit and refuses one level more, naming the rule", async () => {
    const atLimit = nestedObjects(SESSION_FIELD_LIMITS.argumentDepth);
    const parsed = await parseSession("s", [{ tool: "t", arguments: atLimit }], { maxSessionCalls: 5, maxSessionBytes: 1 << 20 });
    expect(parsed[0]?.shape.startsWith("{a:{a:")).toBe(true);
    const tooDeep = nestedObjects(30_000);
    const refused = parseSession("s", [call("ok"), { tool: "t", arguments: tooDeep.slice(0, 60_000) }], {
      maxSessionCalls: 5,
      maxSessionBytes: 1 << 20,
    });
    await expect(refused).rejects.toThrow(InvalidArgumentError);
    await expect(refused).rejects.toThrow(/^tool_calls\[1\]\.arguments: .*the argument depth limit is 64 levels/);
  });

  it("refuses a session over its tool-call or byte limit before parsing any call, naming the limit", async () => {
    const six = Array.from({ length: 6 }, () => call("t"));
    await expect(parseSession("s", six, limits)).rejects.toThrow(
      "tool_calls: has 6 calls; the session size limit is 5 tool calls a session",
    );
    // Not JSON, but the size is checked first: the answer is the limit, not a parse error.
    const big = [call("t"), { tool: "t", arguments: `{${"x".repeat(300)}` }];
    await expect(parseSession("s", big, limits)).rejects.toThrow(
      /^tool_calls: are 3\d\d bytes .*the session size limit is 200 bytes a session/,
    );
    // Bytes, not characters: 79 characters, 219 bytes (70 of them three bytes each).
    const wide = [{ tool: "t", arguments: JSON.stringify({ k: "€".repeat(70) }) }];
    await expect(parseSession("s", wide, limits)).rejects.toThrow("the session size limit is 200 bytes");
  });

  it("parses the calls of an allowed session into tools, values and shapes", async () => {
    const parsed = await parseSession("s", [call(" geo ", { city: "Oslo" }), { tool: "list", arguments: "" }], limits);
    expect(parsed).toEqual([
      { tool: "geo", args: { city: "Oslo" }, shape: "{city:string}" },
      { tool: "list", args: {}, shape: "{}" },
    ]);
    await expect(parseSession("s", [{ tool: "t", arguments: "{nope" }], limits)).rejects.toThrow(/tool_calls\[0\]\.arguments: is not JSON/);
  });
});
