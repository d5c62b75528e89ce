import { type Candidate, plural, splitLines } from "./normalize-repair.js";

/** Code indented as a whole (quoted in a list or YAML block) fails with "unexpected indent". */
export function removeCommonIndentation(text: string): Candidate[] {
  const lines = splitLines(text);
  let common: string | undefined;
  for (const line of lines) {
    if (line.trim() === "") continue;
    const indent = /^[ \t]*/.exec(line)?.[0] ?? "";
    common = common === undefined ? indent : commonPrefix(common, indent);
    if (common === "") return [];
  }
  if (!common) return [];
  const prefix = common;
  // Blank lines keep whatever whitespace they have: it carries no meaning, and leaving it makes
  // the repair the exact inverse of indenting every non-blank line.
  const dedented = lines.map((line) => (line.trim() !== "" ? line.slice(prefix.length) : line)).join("");
  return [{ kind: "dedent", text: dedented, note: `removed ${describeIndent(prefix)} of indentation common to every line` }];
}

function commonPrefix(a: string, b: string): string {
  let n = 0;
  while (n < a.length && a[n] === b[n]) n++;
  return a.slice(0, n);
}

function describeIndent(prefix: string): string {
  if (/^ +$/.test(prefix)) return plural(prefix.length, "space", "spaces");
  if (/^\t+$/.test(prefix)) return plural(prefix.length, "tab", "tabs");
  return plural(prefix.length, "whitespace character", "whitespace characters");
}
