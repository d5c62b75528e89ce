import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * docs/architecture.md#layout against the code: the folders it lists are the folders there are,
 * and each folder's index.ts is its only way in (docs/architecture.md#ways-in-and-import-direction).
 */
const ROOT = path.join(import.meta.dirname, "..");
const SRC = path.join(ROOT, "src");

const folders = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === "gen" && dir === SRC ? [] : sourceFiles(full);
    return e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") ? [full] : [];
  });
}

/** The fenced block under "## Layout". */
function documentedLayout(): string[] {
  const doc = readFileSync(path.join(ROOT, "docs", "architecture.md"), "utf8");
  const section = doc.slice(doc.indexOf("## Layout"));
  const block = /```\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
  return block.split("\n");
}

describe("docs/architecture.md's layout is the code's", () => {
  it("lists every folder of src/ and no folder that is not there", () => {
    const documented = documentedLayout()
      .map((line) => /^src\/([\w-]+)\//.exec(line)?.[1])
      .filter((name): name is string => name !== undefined)
      .sort();
    expect(documented).toEqual(folders(SRC));
  });

  it("lists the sub-packages of control and execution", () => {
    const lines = documentedLayout();
    for (const room of ["control", "execution"]) {
      const start = lines.findIndex((line) => line.startsWith(`src/${room}/`));
      const end = lines.findIndex((line, i) => i > start && line.startsWith("src/"));
      const documented = lines
        .slice(start + 1, end)
        .map((line) => /^ {2}([\w-]+)\//.exec(line)?.[1])
        .filter((name): name is string => name !== undefined)
        .sort();
      expect({ room, folders: documented }).toEqual({ room, folders: folders(path.join(SRC, room)) });
    }
  });
});

describe("each folder's index.ts is its only way in", () => {
  it("no file imports a file inside a folder it is not in, except through that folder's index.ts", () => {
    const violations: string[] = [];
    for (const file of sourceFiles(SRC)) {
      const text = readFileSync(file, "utf8");
      for (const match of text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)) {
        const target = path.resolve(path.dirname(file), (match[1] as string).replace(/\.js$/, ".ts"));
        if (target.startsWith(path.join(SRC, "gen") + path.sep)) continue;
        // The deepest folder holding both; below it, the target must be a file of that folder or a child folder's index.ts.
        let common = path.dirname(file);
        while (!target.startsWith(common + path.sep)) common = path.dirname(common);
        const below = path.relative(common, target).split(path.sep);
        if (below.length === 1 || (below.length === 2 && below[1] === "index.ts")) continue;
        violations.push(`${path.relative(ROOT, file)} imports ${match[1]}`);
      }
    }
    expect(violations).toEqual([]);
  });
});

describe("long files", () => {
  it("no hand-written file in src/ is over 500 lines, except the data tables docs/architecture.md names", () => {
    const doc = readFileSync(path.join(ROOT, "docs", "architecture.md"), "utf8");
    const paragraph = /\*\*Long files\.\*\*([\s\S]*?)\n\n/.exec(doc)?.[1] ?? "";
    const allowed = [...paragraph.matchAll(/`(src\/[^`]+\.ts)`/g)].map((m) => m[1]);
    const long = sourceFiles(SRC)
      .filter((file) => readFileSync(file, "utf8").split("\n").length - 1 > 500)
      .map((file) => path.relative(ROOT, file));
    expect(long.filter((file) => !allowed.includes(file))).toEqual([]);
    expect(allowed.length).toBeGreaterThan(0);
  });
});

describe("import direction", () => {
  /** Room → the rooms of ours it imports, from the code (the composition roots aside). */
  function importGraph(): Map<string, string[]> {
    const roomOf = (file: string): string => {
      const parts = path.relative(SRC, file).split(path.sep);
      return parts.length === 1 ? (parts[0] as string).replace(/\.ts$/, "") : (parts[0] as string);
    };
    const graph = new Map<string, Set<string>>();
    for (const file of sourceFiles(SRC)) {
      const from = roomOf(file);
      const imports = graph.get(from) ?? new Set<string>();
      graph.set(from, imports);
      for (const match of readFileSync(file, "utf8").matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)) {
        const to = roomOf(path.resolve(path.dirname(file), match[1] as string)).replace(/\.js$/, "");
        if (to !== from) imports.add(to);
      }
    }
    for (const root of ["main", "runner-main", "app", "wiring"]) graph.delete(root);
    graph.set("gen", new Set());
    return new Map([...graph].map(([room, imports]) => [room, [...imports].sort()]));
  }

  it("is what docs/architecture.md's table says, room by room", () => {
    const doc = readFileSync(path.join(ROOT, "docs", "architecture.md"), "utf8");
    const section = doc.slice(doc.indexOf("### Ways in and import direction"), doc.indexOf("Two more boundaries:"));
    const documented = new Map<string, string[]>();
    for (const row of section.matchAll(/^\| (`[^|]+) \| ([^|]+) \|/gm)) {
      const imports = [...(row[2] as string).matchAll(/`([\w-]+)`/g)].map((m) => m[1] as string).sort();
      for (const room of (row[1] as string).matchAll(/`([\w-]+)`/g)) documented.set(room[1] as string, imports);
    }
    const actual = importGraph();
    expect(Object.fromEntries([...documented].sort())).toEqual(Object.fromEntries([...actual].sort()));
  });
});
