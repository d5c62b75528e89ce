import { decodeHTMLStrict } from "entities";
import { InvalidArgumentError } from "../../errors/index.js";
import type { PythonSyntaxChecker, SyntaxVerdict } from "./python-syntax.js";

/** Skill code as it will be stored, and what was done to it on the way in. */
export interface NormalizedCode {
  readonly code: string;
  /** One human-readable line per applied repair, for the calling agent to learn from. Empty for clean code. */
  readonly normalizations: readonly string[];
}

/**
 * Undoes what LLM tool-call parsers do to code: CDATA envelopes and leaked XML tags, HTML
 * entities, markdown fences, JSON string escaping and literal `\n` escapes, and indentation
 * common to every line, alone or combined. Every repair is gated by CPython's parser:
 *
 * - code that parses is returned unchanged, byte for byte (one parse). The one exception is an
 *   inert program (see {@link SyntaxVerdict}: only comments, a docstring or one string literal)
 *   that a repair turns into a real one: `#!/usr/bin/env python3\nimport sys\n…` on one line
 *   is a comment to Python and `"import sys\n…"` a string, yet both are escaped code.
 * - otherwise a small breadth-first search over repair sequences (whole-text decoders first,
 *   then wrappers) returns the first result that parses and is not inert, with one note per
 *   step; failing that, the first inert one (a wrapped `__init__.py` of comments is legitimate).
 * - when nothing parses, throws {@link InvalidArgumentError} on field `code` with a diagnosis
 *   the agent can act on: unclosed CDATA, a truncated stream, HTML entities or escaped
 *   newlines that do not decode to valid code, or the parser's own message and position.
 */
export async function normalizeSkillCode(raw: string, checker: PythonSyntaxChecker): Promise<NormalizedCode> {
  const parses = new ParseCache(checker);
  const rawVerdict = await parses.check(raw);
  if (rawVerdict.ok && !rawVerdict.inert) return { code: raw, normalizations: [] };
  const { found, inert } = await search(raw, parses);
  if (found) return result(await decodeEvidentEntities(found, parses));
  // Valid code that only a real program may replace: it stays as it came.
  if (rawVerdict.ok) return { code: raw, normalizations: [] };
  if (inert) return result(inert);
  const trace = await traceRepairs(raw, parses);
  // Only reachable when the search ran out of budget before reaching the traced chain.
  if (trace.verdict.ok) return { code: trace.text, normalizations: trace.steps };
  throw new InvalidArgumentError("code", diagnose(raw, trace, trace.verdict));
}

function result(state: SearchState): NormalizedCode {
  return { code: state.text, normalizations: state.notes };
}

/**
 * Entity-escaped code can still parse when the entities only sit inside strings and comments
 * (`# a &lt; b`, `"]]&gt;"`), so the search stops at the first repair (a fence, say) with the
 * entities still in. The text itself says whether it was escaped: entity references present and
 * not one raw `<`, `>` or `&` anywhere, which escaped text cannot have and real code with those
 * characters in strings or comparisons would. Then the entities are decoded once (the exact
 * inverse of escaping: `&amp;lt;` becomes `&lt;`) when the result parses too
 * (docs/skill-lifecycle.md#normalization). Only for a delivery that needed a repair anyway: code
 * that parses as it came is never touched.
 */
async function decodeEvidentEntities(state: SearchState, parses: ParseCache): Promise<SearchState> {
  if (state.kinds.includes("entities") || !entityEscapedByEvidence(state.text)) return state;
  const decoded = decodeEntities(state.text)[0];
  if (!decoded) return state;
  const verdict = await parses.check(decoded.text);
  if (!verdict.ok || verdict.inert) return state;
  return {
    text: decoded.text,
    notes: [...state.notes, `${decoded.note} (no raw <, > or & anywhere: the code was entity-escaped)`],
    kinds: [...state.kinds, "entities"],
  };
}

function entityEscapedByEvidence(text: string): boolean {
  return ENTITY_ON_LINE.test(text) && !/[<>&]/.test(text.replace(ENTITY, ""));
}

/** Beyond this many parses a search is not worth its cost; real manglings need far fewer. */
const MAX_SEARCH_PARSES = 40;
/** Longest repair sequence tried, e.g. CDATA, then fence, then entities, then escapes. */
const MAX_DEPTH = 4;

type RepairKind = "entities" | "escapes" | "cdata" | "tags" | "fence" | "dedent";

interface Candidate {
  readonly kind: RepairKind;
  readonly text: string;
  readonly note: string;
  /** A refined candidate to try when this one fails to parse, guided by the parser's verdict. */
  readonly retry?: (verdict: SyntaxFailure) => Candidate | undefined;
}

interface SearchState {
  readonly text: string;
  readonly notes: string[];
  readonly kinds: RepairKind[];
}

/** Parses each distinct text once; the search and the diagnosis share the answers. */
class ParseCache {
  private readonly verdicts = new Map<string, SyntaxVerdict>();
  parses = 0;

  constructor(private readonly checker: PythonSyntaxChecker) {}

  async check(text: string): Promise<SyntaxVerdict> {
    const cached = this.verdicts.get(text);
    if (cached) return cached;
    this.parses++;
    const verdict = await this.checker.check(text);
    this.verdicts.set(text, verdict);
    return verdict;
  }
}

// Whole-text decoders come before wrappers: a wrapper grabs a fragment, and on entity-escaped
// code a markdown example inside a docstring could be grabbed and happen to parse.
const REPAIRS: ReadonlyArray<(text: string) => Candidate[]> = [
  decodeEntities,
  undoEscapes,
  stripCdata,
  stripXmlTags,
  extractFences,
  removeCommonIndentation,
];

/** Entities may be double-encoded (`&amp;lt;`); every other repair makes sense once. */
function allowed(state: SearchState, kind: RepairKind): boolean {
  const uses = state.kinds.filter((k) => k === kind).length;
  return uses < (kind === "entities" ? 2 : 1);
}

interface SearchResult {
  /** The first repair result that parses and is a real program. */
  readonly found?: SearchState;
  /** The first that parses but is inert and not itself encoded (a JSON string literal). */
  readonly inert?: SearchState;
}

async function search(raw: string, parses: ParseCache): Promise<SearchResult> {
  let frontier: SearchState[] = [{ text: raw, notes: [], kinds: [] }];
  const seen = new Set([raw]);
  let inert: SearchState | undefined;
  for (let depth = 1; depth <= MAX_DEPTH && frontier.length > 0; depth++) {
    const next: SearchState[] = [];
    for (const state of frontier) {
      for (const repair of REPAIRS) {
        for (let candidate of repair(state.text)) {
          for (;;) {
            if (!allowed(state, candidate.kind) || seen.has(candidate.text)) break;
            if (parses.parses >= MAX_SEARCH_PARSES) return { inert };
            seen.add(candidate.text);
            const child = {
              text: candidate.text,
              notes: [...state.notes, candidate.note],
              kinds: [...state.kinds, candidate.kind],
            };
            const verdict = await parses.check(candidate.text);
            if (verdict.ok) {
              if (!verdict.inert) return { found: child, inert };
              // Inert text parses but may still be encoded code: repair it further.
              if (jsonStringValue(candidate.text) === undefined) inert ??= child;
            } else if (verdict.line === 0) {
              // The parser crashed, timed out or ran out of memory: more variants of the same
              // input would only cost more of the same.
              return { inert };
            }
            const refined = verdict.ok ? undefined : candidate.retry?.(verdict);
            if (!refined) {
              next.push(child);
              break;
            }
            candidate = refined;
          }
        }
      }
    }
    frontier = next;
  }
  return { inert };
}

// ---------------------------------------------------------------------------------------------
// Repairs. Each returns the texts it can make of its input, most plausible first, or none when
// its trigger (an entity, an escape, a fence...) is absent; none of them parses anything.

const ENTITY = /&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});/g;
const ENTITY_ON_LINE = new RegExp(ENTITY.source);

/**
 * One pass over entity references, each decoded by the `entities` library in strict mode (the
 * `;` is required, so `a&b` in code is never touched). One pass is the exact inverse of
 * escaping: `&amp;lt;` becomes `&lt;`, not `<`.
 */
function decodeEntities(text: string): Candidate[] {
  if (!text.includes("&")) return [];
  let count = 0;
  const decoded = text.replace(ENTITY, (entity) => {
    const value = decodeHTMLStrict(entity);
    if (value !== entity) count++;
    return value;
  });
  if (count === 0) return [];
  return [{ kind: "entities", text: decoded, note: `decoded ${plural(count, "HTML entity", "HTML entities")}` }];
}

function jsonStringValue(text: string): string | undefined {
  const trimmed = text.trim();
  if (trimmed.length < 2 || !trimmed.startsWith('"') || !trimmed.endsWith('"')) return undefined;
  try {
    const value: unknown = JSON.parse(trimmed);
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Escaped code, most specific decoding first: a JSON string literal; a JSON string body (every
 * backslash escaped, so exactly invertible); only the newlines replaced by `\n` (decoded with
 * awareness of Python strings, see {@link unescapeNewlines}); then blunt replacements.
 */
function undoEscapes(text: string): Candidate[] {
  if (!text.includes("\\")) return [];
  const candidates: Candidate[] = [];
  const literal = jsonStringValue(text);
  if (literal !== undefined) {
    candidates.push({ kind: "escapes", text: literal, note: "decoded a JSON string literal (the whole code was one JSON-encoded string)" });
  }
  const aware = unescapeNewlines(text);
  const body = jsonStringValue(`"${text}"`);
  // When both decodings agree, the escapes were only line breaks: say so.
  if (body !== undefined && body !== aware.text) {
    candidates.push({ kind: "escapes", text: body, note: `undid JSON string escaping (${describeNewlines(text, body)})` });
  }
  const rawQuotesBody = body === undefined ? jsonBodyWithRawQuotes(text) : undefined;
  if (rawQuotesBody !== undefined && rawQuotesBody !== aware.text) {
    candidates.push({
      kind: "escapes",
      text: rawQuotesBody,
      note: `undid JSON string escaping as a whole (${describeNewlines(text, rawQuotesBody)}, doubled backslashes halved; the quotes were not escaped)`,
    });
  }
  if (aware.count > 0) {
    candidates.push({
      kind: "escapes",
      text: aware.text,
      note: `turned ${plural(aware.count, "literal \\n escape", "literal \\n escapes")} into newlines`,
      retry: retryKeepingCommentEscape(text, aware, new Set()),
    });
  }
  const blunt = text.replace(/\\r\\n|\\n/g, (escape) => (escape === "\\n" ? "\n" : "\r\n"));
  if (blunt !== text) {
    candidates.push({
      kind: "escapes",
      text: blunt,
      note: `turned ${plural(countNewlines(blunt) - countNewlines(text), "literal \\n escape", "literal \\n escapes")} into newlines, inside string literals too`,
    });
  }
  const lenient = text.replace(/\\(r\\n|[nt"'\\/])/g, (_, escaped: string) => LENIENT_ESCAPES[escaped] ?? escaped);
  if (lenient !== text) {
    candidates.push({
      kind: "escapes",
      text: lenient,
      note: `undid JSON-style escaping (${describeNewlines(text, lenient)}, quotes and backslashes)`,
    });
  }
  return candidates;
}

/** Text made only of characters other than a backslash, and complete JSON escapes. */
const JSON_ESCAPED_ONLY = /^(?:[^\\\n]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*$/;

/**
 * A JSON string body whose writer escaped the backslashes and line breaks but left the quotes
 * raw: no real line break at all, every backslash part of a JSON escape, and at least one doubled
 * backslash (else there is nothing to tell it from newline-only escaping). Decoded as a whole, in
 * one pass, so `"a\\nb"` becomes `"a\nb"` as meant, where decoding one escape at a time would
 * keep the doubled backslash. Undefined when the text is not such a body.
 */
function jsonBodyWithRawQuotes(text: string): string | undefined {
  if (!text.includes("\\\\") || !JSON_ESCAPED_ONLY.test(text) || !backslashesDoubledInStrings(text)) return undefined;
  const quoted = text.replace(/\\u[0-9a-fA-F]{4}|\\["\\/bfnrt]|"/g, (token) => (token === '"' ? '\\"' : token));
  return jsonStringValue(`"${quoted}"`);
}

/**
 * Whether every backslash inside the single-quoted Python strings of an escaped delivery comes
 * doubled, as a JSON string body has it (there every backslash of the code was doubled, and a
 * single-quoted string cannot hold a line break). Newline-only escaping leaves the code's own
 * escapes single (`"a\nb"` stays `"a\nb"`), which is how the two deliveries are told apart. Code
 * whose single-quoted strings hold only `\\` escapes stays ambiguous and is read as a JSON body.
 * Lexes the text as the decoded code: after a run of 2k backslashes, the next character is
 * escaped in Python when k is odd. False when no single-quoted string holds a backslash (nothing
 * to go by; in a triple-quoted one `\\` then `n` is also how newline-only escaping writes a
 * `"""\` line continuation).
 */
function backslashesDoubledInStrings(text: string): boolean {
  let seen = false;
  let state: LexState = "code";
  let quote = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (state === "code") {
      if (c === "\\") {
        i += 2;
      } else if (c === "#") {
        state = "comment";
        i++;
      } else if (c === '"' || c === "'") {
        quote = text.startsWith(c.repeat(3), i) ? c.repeat(3) : c;
        state = "string";
        i += quote.length;
      } else {
        i++;
      }
    } else if (state === "comment") {
      if (c === "\\" && text[i + 1] === "n") state = "code";
      i += c === "\\" ? 2 : 1;
    } else if (c === "\\") {
      let run = 0;
      while (text[i + run] === "\\") run++;
      if (run % 2 === 1) {
        // An escaped control character: a line break in a triple-quoted string, which a
        // single-quoted one cannot hold.
        if (quote.length === 1) return false;
        i += run + 1;
      } else {
        if (quote.length === 1) seen = true;
        i += run + ((run / 2) % 2 === 1 ? 1 : 0);
      }
    } else if (text.startsWith(quote, i)) {
      state = "code";
      i += quote.length;
    } else {
      i++;
    }
  }
  return seen;
}

const LENIENT_ESCAPES: Readonly<Record<string, string>> = { "r\\n": "\r\n", n: "\n", t: "\t", '"': '"', "'": "'", "\\": "\\", "/": "/" };

function describeNewlines(before: string, after: string): string {
  return `${plural(countNewlines(after) - countNewlines(before), "literal \\n escape", "literal \\n escapes")} became newlines`;
}

type LexState = "code" | "comment" | "string";

interface Unescaped {
  readonly text: string;
  readonly count: number;
  /** Escapes turned into line breaks inside comments: where in the input, and the output line they start. */
  readonly commentBreaks: ReadonlyArray<{ readonly at: number; readonly line: number }>;
}

/**
 * Turns literal `\n` (and `\r\n`) escapes into line breaks where a line break can be meant,
 * tracking Python's lexical state so that escapes a program legitimately contains survive:
 * - outside strings and comments a backslash is only valid before a line break, so `\n` and
 *   `\t` there are mangling;
 * - inside a single-quoted string a line break is impossible, so `\n` stays as written;
 * - inside a triple-quoted string either reading is valid; a line break is taken, as mangled
 *   docstrings are far commoner than `\n` escapes in them (and in a non-raw string both make
 *   the same value), and `\\n` is read as the common `"""\` line continuation;
 * - inside a comment either reading is valid too; a line break is taken unless the escape's
 *   input position is in `keepInComments`, which the parser-guided retry fills.
 */
function unescapeNewlines(text: string, keepInComments: ReadonlySet<number> = new Set()): Unescaped {
  let out = "";
  let count = 0;
  let line = 1;
  const commentBreaks: Array<{ at: number; line: number }> = [];
  let state: LexState = "code";
  let quote = "";
  let i = 0;
  const emit = (chunk: string, advance: number) => {
    out += chunk;
    i += advance;
    for (const c of chunk) if (c === "\n") line++;
  };
  const escapedBreak = (at: number): string | undefined =>
    text.startsWith("\\n", at) ? "\n" : text.startsWith("\\r\\n", at) ? "\r\n" : undefined;
  const breakLength = (lineBreak: string) => (lineBreak === "\n" ? 2 : 4);
  while (i < text.length) {
    const c = text[i] as string;
    const lineBreak = c === "\\" ? escapedBreak(i) : undefined;
    if (state === "code") {
      if (lineBreak !== undefined) {
        count++;
        emit(lineBreak, breakLength(lineBreak));
      } else if (c === "\\" && text[i + 1] === "t") {
        emit("\t", 2);
      } else if (c === "\\" && escapedBreak(i + 1) === "\n") {
        count++;
        emit("\\\n", 3); // a line continuation whose line break was escaped
      } else if (c === "#") {
        state = "comment";
        emit(c, 1);
      } else if (c === '"' || c === "'") {
        quote = text.startsWith(c.repeat(3), i) ? c.repeat(3) : c;
        state = "string";
        emit(quote, quote.length);
      } else {
        emit(c, 1);
      }
    } else if (state === "comment") {
      if (lineBreak !== undefined && keepInComments.has(i)) {
        emit(text.slice(i, i + breakLength(lineBreak)), breakLength(lineBreak));
      } else if (lineBreak !== undefined) {
        count++;
        commentBreaks.push({ at: i, line: line + 1 });
        emit(lineBreak, breakLength(lineBreak));
        state = "code";
      } else {
        if (c === "\n") state = "code";
        emit(c, 1);
      }
    } else if (quote.length === 3 && lineBreak !== undefined) {
      count++;
      emit(lineBreak, breakLength(lineBreak));
    } else if (quote.length === 3 && c === "\\" && escapedBreak(i + 1) === "\n") {
      count++;
      emit("\\\n", 3);
    } else if (c === "\\") {
      emit(text.slice(i, i + 2), 2); // an escape pair: the escaped character never ends the string
    } else if (text.startsWith(quote, i)) {
      state = "code";
      emit(quote, quote.length);
    } else {
      if (c === "\n" && quote.length === 1) state = "code"; // a broken string; let the parser judge
      emit(c, 1);
    }
  }
  return { text: out, count, commentBreaks };
}

/** Comment `\n` escapes worth keeping literal, one more per failed parse; bounded by the search budget. */
const MAX_COMMENT_RETRIES = 8;

/**
 * The parser-guided half of {@link unescapeNewlines}. A comment that mentions `\n` (`# split on
 * \n and strip`) is split by it, and the words after it become a line the parser rejects. When
 * the error is on such a line and the line reads as prose (no `=`, brackets or colons), that
 * escape is kept literal and the text unescaped again. Never for a line that looks like code:
 * folding a broken statement into a comment would make invalid code "valid" by deleting it.
 */
function retryKeepingCommentEscape(text: string, previous: Unescaped, kept: ReadonlySet<number>) {
  return (verdict: SyntaxFailure): Candidate | undefined => {
    if (kept.size >= MAX_COMMENT_RETRIES) return undefined;
    const culprit = previous.commentBreaks.find((b) => b.line === verdict.line);
    if (!culprit || /[=()[\]{}:]/.test(lineAt(previous.text, verdict.line))) return undefined;
    const keep = new Set(kept).add(culprit.at);
    const next = unescapeNewlines(text, keep);
    return {
      kind: "escapes",
      text: next.text,
      note: `turned ${plural(next.count, "literal \\n escape", "literal \\n escapes")} into newlines (keeping ${plural(keep.size, "escape", "escapes")} in comments)`,
      retry: retryKeepingCommentEscape(text, next, keep),
    };
  };
}

const CDATA_OPEN = "<![CDATA[";
const CDATA_CLOSE = "]]>";

/**
 * The content of a CDATA envelope, kept verbatim (whitespace inside the envelope is the code's;
 * Python ignores leading blank lines). Text outside it (leaked XML tags, prose) is dropped, and
 * adjacent sections are joined as XML does, which also undoes the `]]]]><![CDATA[>` split an XML
 * writer uses for a `]]>` in the code. A lone closer is dropped too; a lone opener is not, as it
 * suggests a cut-off stream (see the diagnosis).
 */
function stripCdata(text: string): Candidate[] {
  const open = text.indexOf(CDATA_OPEN);
  const close = text.lastIndexOf(CDATA_CLOSE);
  if (open >= 0 && close > open) {
    const sections = text.slice(open + CDATA_OPEN.length, close);
    const joined = sections.replace(/\]\]>(\s*)<!\[CDATA\[/g, "$1");
    return [{ kind: "cdata", text: joined, note: "stripped a CDATA envelope" }];
  }
  if (open < 0 && close >= 0) {
    const stray = /\]\]>((?:\s*<\/[A-Za-z_][\w.:-]*\s*>)*\s*)$/.exec(text);
    if (stray) return [{ kind: "cdata", text: text.slice(0, stray.index) + (stray[1] ?? ""), note: "removed a stray CDATA closer ]]>" }];
  }
  return [];
}

const LEADING_CDATA = /^\s*(?:<[^<>!]*>\s*)*<!\[CDATA\[/;
const LEADING_TAG = /^\s*<([A-Za-z_][\w.:-]*)(?:\s[^<>]*)?>/;
const TRAILING_TAG = /<\/([A-Za-z_][\w.:-]*)\s*>\s*$/;

/** Tool-call wrappers nest two or three deep; more tags than this are a document, not a wrapper. */
const MAX_WRAPPER_TAGS = 8;

/** Tool-call XML around the code, e.g. `<parameter name="code">…</parameter>`; no Python line starts with `<`. */
function stripXmlTags(text: string): Candidate[] {
  let inner = text;
  const names: string[] = [];
  for (let n = 0, match = LEADING_TAG.exec(inner); match && n < MAX_WRAPPER_TAGS; n++, match = LEADING_TAG.exec(inner)) {
    names.push(`<${match[1]}>`);
    inner = inner.slice(match[0].length);
  }
  for (let n = 0, match = TRAILING_TAG.exec(inner); match && n < MAX_WRAPPER_TAGS; n++, match = TRAILING_TAG.exec(inner)) {
    names.push(`</${match[1]}>`);
    inner = inner.slice(0, match.index);
  }
  if (names.length === 0) return [];
  return [{ kind: "tags", text: inner, note: `stripped leaked XML tags (${[...new Set(names)].join(" ")})` }];
}

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
function extractFences(text: string): Candidate[] {
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

function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
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

/** Code indented as a whole (quoted in a list or YAML block) fails with "unexpected indent". */
function removeCommonIndentation(text: string): Candidate[] {
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

// ---------------------------------------------------------------------------------------------
// Diagnosis, when no repair yields valid Python.

type SyntaxFailure = Extract<SyntaxVerdict, { ok: false }>;

/** An envelope opened where the code should start (after whitespace or tags) and never closed. */
const UNCLOSED_CDATA = new RegExp(`${LEADING_CDATA.source}(?![\\s\\S]*\\]\\]>)`);

interface Trace {
  readonly text: string;
  readonly steps: string[];
  /** How many of the steps only removed wrappers (CDATA, tags, fence). */
  readonly unwrapSteps: number;
  readonly verdict: SyntaxVerdict;
  readonly entityCount: number;
  readonly literalNewlines: number;
}

/**
 * Re-traces the most plausible repair chain: unwrap (CDATA, XML tags, fence), then decode HTML
 * entities if one sits on the line the parser rejects, then undo escapes if literal `\n`
 * outnumber real line breaks. Its verdicts are mostly cached from the search.
 */
async function traceRepairs(raw: string, parses: ParseCache): Promise<Trace> {
  const steps: string[] = [];
  let text = unwrapAll(raw, steps);
  const unwrapSteps = steps.length;
  let verdict = await parses.check(text);

  let entityCount = 0;
  if (!verdict.ok && verdict.line > 0 && ENTITY_ON_LINE.test(lineAt(text, verdict.line))) {
    const decoded = decodeEntities(text)[0];
    if (decoded) {
      entityCount = countMatches(text, ENTITY);
      text = decoded.text;
      steps.push(decoded.note);
      verdict = await parses.check(text);
    }
  }

  let literalNewlines = 0;
  const escapes = countMatches(text, /\\n/g);
  if (!verdict.ok && escapes > countNewlines(text)) {
    const unescaped = undoEscapes(text)[0];
    if (unescaped) {
      literalNewlines = escapes;
      text = unescaped.text;
      steps.push(unescaped.note);
      // Escaped text hides its wrappers (a fence needs real lines): unwrap again.
      text = unwrapAll(text, steps);
      verdict = await parses.check(text);
    }
  }
  return { text, steps, unwrapSteps, verdict, entityCount, literalNewlines };
}

/** Removes each kind of wrapper once, outside in, taking each one's first candidate. */
function unwrapAll(text: string, steps: string[]): string {
  let inner = text;
  for (const unwrap of [stripCdata, stripXmlTags, extractFences]) {
    const first = unwrap(inner)[0];
    if (first) {
      inner = first.text;
      steps.push(first.note);
    }
  }
  return inner;
}

/** Names the first problem in a failed trace that the agent can fix. Reads after "code: ". */
function diagnose(raw: string, trace: Trace, verdict: SyntaxFailure): string {
  if (UNCLOSED_CDATA.test(raw)) {
    return (
      "is wrapped in a CDATA section that is never closed (<![CDATA[ without a matching ]]>): " +
      "the tool-call wrapper leaked into the code, or the stream was cut off; send the plain Python source"
    );
  }
  const { steps, entityCount, literalNewlines } = trace;
  const positionsAfter = (described: number) =>
    described > 0 ? ` (positions refer to the code after: ${steps.slice(0, described).join("; ")})` : "";
  const after = positionsAfter(steps.length);
  const unwrapped = positionsAfter(trace.unwrapSteps);
  const where = `line ${verdict.line}, column ${verdict.column}`;
  // "invalid syntax. Maybe you meant '=='…?" reads badly with a position glued to its end.
  const parserSays = verdict.message.includes(". ") ? `${verdict.message} (at ${where})` : `${verdict.message} at ${where}`;

  if (verdict.line === 0) return `could not be parsed: ${verdict.message}; send smaller or simpler code`;
  if (verdict.atEndOfInput) return `${truncation(verdict)}: the stream was probably cut off; send the complete source${after}`;
  if (literalNewlines > 0) {
    return (
      `holds ${plural(literalNewlines, "literal \\n escape", "literal \\n escapes")} instead of line breaks and is still not valid Python after turning them into newlines: ` +
      `${parserSays}; send the source with real line breaks, not a JSON-escaped string${unwrapped}`
    );
  }
  if (entityCount > 0) {
    return (
      `contains ${plural(entityCount, "HTML entity", "HTML entities")} (such as &lt; or &amp;) and is still not valid Python after decoding them: ` +
      `${parserSays}; send raw source with literal <, > and & characters${unwrapped}`
    );
  }
  return `is not valid Python: ${parserSays}${after}`;
}

function truncation(verdict: SyntaxFailure): string {
  const { message, line, column } = verdict;
  if (message.startsWith("unterminated triple-quoted string")) {
    return `ends inside an unterminated triple-quoted string starting at line ${line}`;
  }
  if (message.startsWith("unterminated string literal")) {
    return `ends inside an unterminated string starting at line ${line}, column ${column}`;
  }
  const bracket = /^'(.)' was never closed/.exec(message);
  if (bracket) return `ends with '${bracket[1]}' at line ${line}, column ${column} never closed`;
  if (message.startsWith("expected an indented block")) return `ends before the body of a block (${message})`;
  return `ends in the middle of a statement (${message} at line ${line}, column ${column})`;
}

function lineAt(text: string, line: number): string {
  return text.split("\n")[line - 1] ?? "";
}

function countMatches(text: string, pattern: RegExp): number {
  return text.match(pattern)?.length ?? 0;
}

function countNewlines(text: string): number {
  return countMatches(text, /\n/g);
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}
