/**
 * The dependency graph (docs/composition.md#dependency-graph): deterministic topological order
 * (depth-first, neighbours in name order, dependencies before dependents) with cycle detection
 * that names the cycle, e.g. `a → b → a`.
 */

/** A cycle in the graph; `cycle` starts and ends with the same node. */
export class CycleError extends Error {
  constructor(readonly cycle: readonly string[]) {
    super(`dependency cycle: ${cycle.join(" → ")}`);
    this.name = "CycleError";
  }
}

/**
 * Every node `root` reaches, dependencies first, ending with `root`. `edges(node)` lists a node's
 * direct dependencies; visiting order is by name, so the result never depends on declaration order.
 */
export function loadOrder(root: string, edges: (node: string) => readonly string[]): string[] {
  const order: string[] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const onPath = new Set<string>();
  const visit = (node: string): void => {
    if (done.has(node)) return;
    if (onPath.has(node)) throw new CycleError([...path.slice(path.indexOf(node)), node]);
    path.push(node);
    onPath.add(node);
    for (const next of [...new Set(edges(node))].sort()) visit(next);
    path.pop();
    onPath.delete(node);
    done.add(node);
    order.push(node);
  };
  visit(root);
  return order;
}

/**
 * The longest chain of composed skills from `root` (a composition of plain skills has depth 1).
 * Call after loadOrder has ruled out cycles.
 */
export function nestingDepth(root: string, edges: (node: string) => readonly string[], isComposed: (node: string) => boolean): number {
  const memo = new Map<string, number>();
  const depth = (node: string): number => {
    const known = memo.get(node);
    if (known !== undefined) return known;
    const below = Math.max(0, ...edges(node).map(depth));
    const value = isComposed(node) ? below + 1 : below;
    memo.set(node, value);
    return value;
  };
  return depth(root);
}
