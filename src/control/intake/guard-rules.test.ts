import { describe, expect, it } from "vitest";
import { scanSkillCode } from "./content-guard.js";
import { ADVERSARIAL_GUARD_INPUTS, fill } from "../../../test/support/guard-adversarial-inputs.js";
import { GUARD_RULE_CASES as CASES } from "../../../test/support/guard-rule-cases.js";
import { GUARD_RULES, type GuardCategory } from "./guard-rules.js";

const ruleIds = GUARD_RULES.map((rule) => rule.id);

describe("guard rules: every rule has tests", () => {
  it("has a case entry, with at least one hit and one near miss, for every rule and no other", () => {
    expect(Object.keys(CASES).sort()).toEqual([...ruleIds].sort());
    for (const [id, cases] of Object.entries(CASES)) {
      expect(cases.hits.length, `${id} needs a true positive`).toBeGreaterThan(0);
      expect(cases.misses.length, `${id} needs a near miss`).toBeGreaterThan(0);
    }
  });
});

describe.each(GUARD_RULES.map((rule) => [rule.id, rule] as const))("rule %s", (id, rule) => {
  const cases = CASES[id] ?? { hits: [], misses: [] };
  it.each(cases.hits.map((code) => [code.slice(0, 60).replace(/\s+/g, " "), code]))("flags: %s", (_label, code) => {
    const report = scanSkillCode(code);
    const finding = report.findings.find((f) => f.ruleId === id);
    expect(finding, `expected ${id} in ${JSON.stringify(report.findings.map((f) => f.ruleId))}`).toBeDefined();
    expect(finding?.severity).toBe(rule.severity);
    expect(finding?.category).toBe(rule.category);
    if (rule.severity === "dangerous") expect(report.dangerous.map((f) => f.ruleId)).toContain(id);
  });
  it.each(cases.misses.map((code) => [code.slice(0, 60).replace(/\s+/g, " "), code]))("lets pass: %s", (_label, code) => {
    const report = scanSkillCode(code);
    expect(report.findings.map((f) => f.ruleId)).not.toContain(id);
    expect(report.dangerous, "a near miss is benign code: nothing may reject it").toEqual([]);
  });
});

describe("rule set", () => {
  const categories: GuardCategory[] = [
    "destructive-command",
    "code-injection",
    "obfuscation",
    "credential-exfiltration",
    "path-traversal",
    "destructive-sql",
    "privilege-escalation",
    "persistence",
    "crypto-mining",
    "reverse-shell",
  ];

  it("has unique kebab-case ids, covers every category, and says what to do", () => {
    expect(new Set(ruleIds).size).toBe(ruleIds.length);
    for (const rule of GUARD_RULES) {
      expect(rule.id).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)+$/);
      expect(rule.message.length).toBeGreaterThan(40);
      expect(rule.pattern.flags).toContain("g");
    }
    for (const category of categories) expect(GUARD_RULES.some((rule) => rule.category === category)).toBe(true);
  });

  it("uses only bounded quantifiers, except in patterns anchored to the start of the text", () => {
    const patterns = GUARD_RULES.flatMap((rule) => [
      { id: rule.id, pattern: rule.pattern },
      ...(rule.requires ?? []).map((pattern) => ({ id: `${rule.id} (requires)`, pattern })),
      ...(rule.unless === undefined ? [] : [{ id: `${rule.id} (unless)`, pattern: rule.unless }]),
      ...(rule.near === undefined ? [] : [{ id: `${rule.id} (near)`, pattern: rule.near.pattern }]),
    ]);
    for (const { id, pattern } of patterns) {
      const anchored = pattern.source.startsWith("^") && !pattern.flags.includes("m");
      if (!anchored) expect(unboundedQuantifiers(pattern.source), id).toEqual([]);
    }
  });
});

/** The unbounded quantifiers (`*`, `+`, `{n,}`) in a regex source, outside character classes. */
function unboundedQuantifiers(source: string): string[] {
  const found: string[] = [];
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") {
      i++;
      continue;
    }
    if (inClass) {
      if (c === "]") inClass = false;
      continue;
    }
    if (c === "[") inClass = true;
    else if (c === "*" || c === "+") found.push(`${c} at ${i}: …${source.slice(Math.max(0, i - 20), i + 1)}`);
    else if (c === "{" && /^\{\d+,\}/.test(source.slice(i))) found.push(`{n,} at ${i}`);
  }
  return found;
}

describe("adversarial input: bounded work by construction", () => {
  // Linear time is argued statically (every quantifier bounded, see "uses only bounded
  // quantifiers" above); npm run bench times these inputs next to a benign file of the same size.
  it("scans 100 KB inputs built to make backtracking regexes explode, with a bounded number of findings (all rules)", () => {
    for (const [name, input] of Object.entries(ADVERSARIAL_GUARD_INPUTS)) {
      const report = scanSkillCode(input);
      expect(report.findings.length, name).toBeLessThanOrEqual(20 * GUARD_RULES.length);
    }
  });

  it("scans 100 KB of each rule's own true positive, cut and repeated, with at most 20 findings (each rule alone)", () => {
    for (const rule of GUARD_RULES) {
      const sample = CASES[rule.id]?.hits[0] ?? "";
      for (const cut of [0.25, 0.5, 0.75, 1]) {
        const prefix = sample.slice(0, Math.max(1, Math.floor(sample.length * cut)));
        for (const unit of [prefix, prefix.replace(/[\n\r]/g, " ")]) {
          expect(scanSkillCode(fill(unit), [rule]).findings.length, `${rule.id} at ${cut * 100}%`).toBeLessThanOrEqual(20);
        }
      }
    }
  });
});
