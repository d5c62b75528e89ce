/**
 * How deeply arrays and objects nest in `value` (a scalar 0, `[]` or `{}` 1), counted without
 * recursion; stops at the first level past `limit`, so the answer is at most `limit + 1`. Code
 * that walks JSON recursively (schema validators, renderers, serializers) overflows its stack on a
 * value nested a few thousand levels deep, which fits in a few kilobytes of text: callers refuse
 * such values before they walk them.
 */
export function jsonDepth(value: unknown, limit: number): number {
  let deepest = 0;
  const pending: Array<{ readonly item: object; readonly depth: number }> = [];
  if (typeof value === "object" && value !== null) pending.push({ item: value, depth: 1 });
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    deepest = Math.max(deepest, next.depth);
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(next.item) ? next.item : Object.values(next.item)) {
      if (typeof child === "object" && child !== null) pending.push({ item: child as object, depth: next.depth + 1 });
    }
  }
  return deepest;
}
