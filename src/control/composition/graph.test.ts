import { describe, expect, it } from "vitest";
import { CycleError, loadOrder, nestingDepth } from "./graph.js";

const graph = (edges: Record<string, string[]>) => (node: string) => edges[node] ?? [];

describe("dependency graph", () => {
  it("orders dependencies first, deterministically by name whatever the declaration order", () => {
    const a = loadOrder("app", graph({ app: ["zeta", "alpha"], zeta: ["core"], alpha: ["core"] }));
    const b = loadOrder("app", graph({ app: ["alpha", "zeta"], zeta: ["core"], alpha: ["core"] }));
    expect(a).toEqual(["core", "alpha", "zeta", "app"]);
    expect(b).toEqual(a);
  });

  it("names a cycle as a → b → a", () => {
    expect(() => loadOrder("a", graph({ a: ["b"], b: ["a"] }))).toThrow(new CycleError(["a", "b", "a"]));
    expect(() => loadOrder("x", graph({ x: ["a"], a: ["b"], b: ["c"], c: ["a"] }))).toThrow(
      expect.objectContaining({ name: "CycleError", message: "dependency cycle: a → b → c → a" }),
    );
    expect(() => loadOrder("self", graph({ self: ["self"] }))).toThrow(/self → self/);
  });

  it("measures how deep composed skills nest", () => {
    const edges = graph({ top: ["mid", "plain1"], mid: ["low"], low: ["plain2"] });
    const composed = new Set(["top", "mid", "low"]);
    expect(nestingDepth("top", edges, (n) => composed.has(n))).toBe(3);
    expect(nestingDepth("low", edges, (n) => composed.has(n))).toBe(1);
  });
});
