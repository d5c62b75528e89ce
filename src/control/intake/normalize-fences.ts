import { type Candidate, splitLines } from "./normalize-repair.js";
import { LEADING_CDATA } from "./normalize-wrappers.js";

interface FenceBlock {
  readonly language: string;
  readonly content: string;
  readonly closed: boolean;
}

// Fence lines are matched by prefix and the info string is split by hand: a regex with two
// overlapping runs (language, rest of the info string) backtracks quadratically on a long line.
const FENCE_MARKER = /^( {0,3})(`{3,}|~{3,})/;
const FENCE_CLOSE = /^ {0,3}(`{3,}|~{3,})[ \t]*\r?\n?$/;
const PYTHON_TAGS = new Set(["python", "python3", "py", "py3", "python2", "ipython", "pycon", "sage"]);
/** More blocks than this and the text is a document, not a code delivery. */
const MAX_FENCE_CANDIDATES = 6;

/**
 * Markdown code blocks, tried in this order: python-tagged blocks (largest first), then the span
 * from the first opening to the last closing fence (for code whose docstrings hold fences of
 * their own), then untagged blocks, then blocks tagged with other languages; blank blocks never.
 * The first that parses wins, so prose and shell examples around the code are harmless.
 */
export function extractFences(text: string): Candidate[] {
  if (!text.includes("```") && !text.includes("~~~")) return [];
  // Wrappers come off from the outside in: a block cut out of a CDATA envelope would keep the
  // envelope's own escaping (a split "]]>") and might still parse.
  if (LEADING_CDATA.test(text)) return [];
  const blocks = findFenceBlocks(text);
  if (blocks.length === 0) return [];
  const bySize = (a: FenceBlock, b: FenceBlock) => b.content.length - a.content.length;
  const python = blocks.filter((b) => PYTHON_TAGS.has(b.language.toLowerCase())).sort(bySize);
  const untagged = blocks.filter((b) => b.language === "").sort(bySize);
  const other = blocks.filter((b) => b.language !== "" && !PYTHON_TAGS.has(b.language.toLowerCase())).sort(bySize);
  const outermost = outermostSpan(text);
  const span = outermost && !blocks.some((b) => b.content === outermost.content) ? outermost : undefined;
  const ordered = [...python, ...(span ? [span] : []), ...untagged, ...other];
  const candidates: Candidate[] = [];
  const seen = new Set<string>();
  for (const block of ordered) {
    if (block.content.trim() === "" || seen.has(block.content)) continue;
    seen.add(block.content);
    const index = blocks.indexOf(block);
    const where =
      block === span ? "; from the first to the last fence" : blocks.length > 1 ? `; block ${index + 1} of ${blocks.length}` : "";
    const unclosed = block.closed ? "" : "; the fence was never closed";
    candidates.push({
      kind: "fence",
      text: block.content,
      note: `extracted code from a markdown fence (${block.language || "no language tag"}${where}${unclosed})`,
    });
    if (candidates.length >= MAX_FENCE_CANDIDATES) break;
  }
  return candidates;
}

function findFenceBlocks(text: string): FenceBlock[] {
  const blocks: FenceBlock[] = [];
  let open: { marker: string; indent: number; language: string; lines: string[] } | undefined;
  for (const line of splitLines(text)) {
    if (!open) {
      const opener = fenceOpener(line);
      if (opener) open = { ...opener, lines: [] };
      continue;
    }
    const close = FENCE_CLOSE.exec(line);
    if (close && closes(open.marker, close[1] ?? "")) {
      blocks.push({ language: open.language, content: dedentBy(open.lines, open.indent), closed: true });
      open = undefined;
    } else {
      open.lines.push(line);
    }
  }
  if (open) blocks.push(unclosedBlock(open.language, open.marker, open.lines, open.indent));
  return blocks;
}

function fenceOpener(line: string): { indent: number; marker: string; language: string } | undefined {
  const match = FENCE_MARKER.exec(line);
  if (!match) return undefined;
  const marker = match[2] ?? "";
  const info = line.slice(match[0].length).trim();
  if (marker.startsWith("`") && info.includes("`")) return undefined; // inline code, not a fence
  return { indent: (match[1] ?? "").length, marker, language: info.split(/\s/, 1)[0] ?? "" };
}

function closes(opener: string, closer: string): boolean {
  return closer[0] === opener[0] && closer.length >= opener.length;
}

/**
 * A block never closed on a line of its own may have been closed inline, at the end of its
 * last code line (`print(x)```), with prose after it; the last such line ends the block.
 */
function unclosedBlock(language: string, marker: string, lines: readonly string[], indent: number): FenceBlock {
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = (lines[i] as string).trimEnd();
    if (line.endsWith(marker) && line.length > marker.length) {
      const kept = [...lines.slice(0, i), line.slice(0, -marker.length)];
      return { language, content: dedentBy(kept, indent), closed: true };
    }
  }
  return { language, content: dedentBy(lines, indent), closed: false };
}

function outermostSpan(text: string): FenceBlock | undefined {
  const lines = splitLines(text);
  const first = lines.findIndex((line) => fenceOpener(line) !== undefined);
  const opener = fenceOpener(lines[first] ?? "");
  if (!opener) return undefined;
  const { marker } = opener;
  let last = -1;
  for (let i = lines.length - 1; i > first; i--) {
    const close = FENCE_CLOSE.exec(lines[i] ?? "");
    if (close && closes(marker, close[1] ?? "")) {
      last = i;
      break;
    }
  }
  if (last < 0) return undefined;
  return { language: opener.language, content: dedentBy(lines.slice(first + 1, last), opener.indent), closed: true };
}

/** CommonMark: content lines lose up to as many leading spaces as the opening fence had. */
function dedentBy(lines: readonly string[], indent: number): string {
  if (indent === 0) return lines.join("");
  return lines.map((line) => line.replace(new RegExp(`^ {0,${indent}}`), "")).join("");
}
