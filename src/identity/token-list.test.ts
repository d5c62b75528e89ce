import { describe, expect, it } from "vitest";
import { parseInlineTokens, parseTokensFile, sha256Hex, TokenListError } from "./token-list.js";

const ALICE = "alice-token-0123456789";
const OPS = "ops-token-abcdefghijkl";

function problemsOf(work: () => unknown): readonly string[] {
  try {
    work();
  } catch (error) {
    if (error instanceof TokenListError) return error.problems;
    throw error;
  }
  throw new Error("expected a TokenListError");
}

describe("the tokens file", () => {
  it("maps plain and hashed tokens to agents, with the admin role where given", () => {
    const grants = parseTokensFile(
      JSON.stringify({
        tokens: [
          { agent: "alice", token: ALICE },
          { agent: "ops", token_sha256: sha256Hex(OPS).toUpperCase(), admin: true },
        ],
      }),
      "tokens.json",
    );
    expect(grants).toEqual([
      { agentId: "alice", admin: false, delegate: false, tokenSha256: sha256Hex(ALICE) },
      { agentId: "ops", admin: true, delegate: false, tokenSha256: sha256Hex(OPS) },
    ]);
  });

  it("lists every problem at once and never echoes a token", () => {
    const problems = problemsOf(() =>
      parseTokensFile(
        JSON.stringify({
          tokens: [
            { agent: "bad agent", token: ALICE },
            { agent: "short", token: "tooshort" },
            { agent: "both", token: ALICE, token_sha256: sha256Hex(ALICE) },
            { agent: "hash", token_sha256: "xyz" },
          ],
        }),
        "tokens.json",
      ),
    );
    expect(problems).toEqual([
      expect.stringMatching(/^tokens\[0\]\.agent: "bad agent" is not a valid agent id/),
      expect.stringMatching(/^tokens\[1\]\.token: is 8 characters; use at least 16/),
      'tokens[2]: give exactly one of "token" and "token_sha256"',
      "tokens[3].token_sha256: must be 64 hex digits (the SHA-256 of the token)",
    ]);
    expect(problems.join("\n")).not.toContain("tooshort");
  });

  it("refuses malformed JSON, unknown keys, an empty list and one token for two agents", () => {
    expect(problemsOf(() => parseTokensFile("{", "f"))[0]).toMatch(/^not valid JSON/);
    expect(problemsOf(() => parseTokensFile(JSON.stringify({ tokens: [{ agent: "a", token: ALICE, role: "admin" }] }), "f"))[0]).toMatch(
      /tokens\.0: Unrecognized key/,
    );
    expect(problemsOf(() => parseTokensFile(JSON.stringify({ tokens: [] }), "f"))).toEqual([
      '"tokens" is empty: nobody could call the service',
    ]);
    expect(
      problemsOf(() =>
        parseTokensFile(
          JSON.stringify({
            tokens: [
              { agent: "a", token: ALICE },
              { agent: "b", token_sha256: sha256Hex(ALICE) },
            ],
          }),
          "f",
        ),
      ),
    ).toEqual(['the same token is listed for "a" and "b"']);
  });
});

describe("inline tokens (SKILL_ENGINE_TOKENS)", () => {
  it('reads "agent=token" and "agent:admin=token", allowing "=" inside a token', () => {
    const padded = "c29tZS1yYW5kb20tYnl0ZXM=";
    expect(parseInlineTokens(` alice=${ALICE}, ops:admin=${OPS} ,carol=${padded}`, "env")).toEqual([
      { agentId: "alice", admin: false, delegate: false, tokenSha256: sha256Hex(ALICE) },
      { agentId: "ops", admin: true, delegate: false, tokenSha256: sha256Hex(OPS) },
      { agentId: "carol", admin: false, delegate: false, tokenSha256: sha256Hex(padded) },
    ]);
  });

  it("names the entry that is wrong", () => {
    expect(problemsOf(() => parseInlineTokens(`alice${ALICE}`, "env"))).toEqual(['entry 1: expected "agent=token" or "agent:admin=token"']);
    expect(problemsOf(() => parseInlineTokens(`alice:root=${ALICE}`, "env"))).toEqual([
      'entry 1: the roles are "admin" and "delegate" (agent:admin=token, agent:delegate=token)',
    ]);
    expect(problemsOf(() => parseInlineTokens(`alice=${ALICE},bob=short`, "env"))).toEqual([
      expect.stringMatching(/^entry 2 \(bob\): is 5 characters/),
    ]);
    expect(problemsOf(() => parseInlineTokens(" , ", "env"))).toEqual(["no tokens given"]);
  });
});
