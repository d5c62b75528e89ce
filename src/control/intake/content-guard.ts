/**
 * The content guard: scans a Python skill's code for signs of hostile intent before it is
 * registered. Defence in depth only: the sandbox is the boundary, so the guard favours precision
 * (near-zero false rejections) over recall. It must run on normalized code (entity decoding and
 * the like happen earlier, in intake), and it always scans the whole text: a prefix window is a
 * known evasion (pad past it, then put the payload).
 */
import { InvalidArgumentError } from "../../errors/index.js";
import { GUARD_RULES, type GuardCategory, type GuardRule, type GuardSeverity, type RuleContext } from "./guard-rules.js";

/** One thing the guard found. */
export interface GuardFinding {
  readonly ruleId: string;
  readonly category: GuardCategory;
  readonly severity: GuardSeverity;
  readonly message: string;
  /** 1-based line of the start of the match. */
  readonly line: number;
  /** The matched text, whitespace collapsed, clipped to about 80 characters. */
  readonly excerpt: string;
}

/** Everything the guard found; `dangerous` and `cautions` partition `findings`. */
export interface GuardReport {
  readonly findings: GuardFinding[];
  /** Findings that reject the skill. */
  readonly dangerous: GuardFinding[];
  /** Findings reported as warnings; the skill is accepted. */
  readonly cautions: GuardFinding[];
}

/**
 * Thrown when the code trips a `dangerous` rule. Field "code"; the message names the first rule,
 * its category and line, and says what to do, e.g.
 * `code: rejected by content guard rule "reverse-shell-dev-tcp" (reverse-shell) at line 7: …`.
 */
export class GuardViolationError extends InvalidArgumentError {
  /** The id of the first dangerous rule (the one the message names). */
  readonly ruleId: string;

  constructor(readonly report: GuardReport) {
    const first = report.dangerous[0];
    if (first === undefined) throw new TypeError("GuardViolationError needs at least one dangerous finding");
    const more = report.dangerous.length - 1;
    super(
      "code",
      `rejected by content guard rule "${first.ruleId}" (${first.category}) at line ${first.line}: ${first.message}` +
        ` [matched: ${first.excerpt}]` +
        (more > 0 ? ` (and ${more} more dangerous finding${more === 1 ? "" : "s"})` : ""),
    );
    this.name = "GuardViolationError";
    this.ruleId = first.ruleId;
  }
}

/**
 * Bounds the report when adversarial input matches one rule thousands of times. Matches that a
 * rule's extra checks reject are not capped: stopping early would let a payload hide behind
 * thousands of decoys; those checks are constant-time or look at a bounded window instead.
 */
const MAX_FINDINGS_PER_RULE = 20;
const EXCERPT_LENGTH = 80;

/** What the guard takes into account beside the code. */
export interface ScanOptions {
  /** Secret names the skill declares (docs/security.md#declaring-and-delivering): reading one is no finding. @default [] */
  readonly declaredSecrets?: readonly string[];
  /** The skill declares hosts (docs/security.md#declaring-hosts): sending a declared secret to them is no finding. @default false */
  readonly declaresNetwork?: boolean;
}

/**
 * Scans the whole of `code` with `rules` (the full rule set unless a test narrows it).
 * Linear in the length of the code; see guard-rules.ts for how the patterns keep it so.
 */
export function scanSkillCode(code: string, rules: readonly GuardRule[] = GUARD_RULES, options: ScanOptions = {}): GuardReport {
  const declaredSecrets = new Set(options.declaredSecrets ?? []);
  const declaresNetwork = options.declaresNetwork ?? false;
  const views = { source: code, code: codeView(code) };
  const lines = lineStarts(code);
  const findings: GuardFinding[] = [];
  const contexts = new Map<string, ScanContext>();
  for (const rule of rules) {
    const view = rule.view ?? "code";
    let context = contexts.get(view);
    if (context === undefined) contexts.set(view, (context = new ScanContext(views[view], declaredSecrets, declaresNetwork)));
    findings.push(...runRule(rule, context, lines));
  }
  const kept = dropCautionsShadowedByDangerous(findings);
  kept.sort((a, b) => a.line - b.line || rank(a) - rank(b));
  return {
    findings: kept,
    dangerous: kept.filter((finding) => finding.severity === "dangerous"),
    cautions: kept.filter((finding) => finding.severity === "caution"),
  };
}

/** Scans and throws {@link GuardViolationError} on any dangerous finding; returns the report (cautions) otherwise. */
export function assertSkillCodeAllowed(code: string): GuardReport {
  const report = scanSkillCode(code);
  if (report.dangerous.length > 0) throw new GuardViolationError(report);
  return report;
}

class ScanContext implements RuleContext {
  private readonly memos = new Map<string, unknown>();
  private readonly fileMatches = new Map<RegExp, boolean>();

  constructor(
    readonly text: string,
    readonly declaredSecrets: ReadonlySet<string>,
    readonly declaresNetwork: boolean,
  ) {}

  memo<T>(key: string, compute: (text: string) => T): T {
    if (!this.memos.has(key)) this.memos.set(key, compute(this.text));
    return this.memos.get(key) as T;
  }

  /** Whether `pattern` matches anywhere; cached, as many rules share the same condition. */
  matchesAnywhere(pattern: RegExp): boolean {
    let found = this.fileMatches.get(pattern);
    if (found === undefined) {
      pattern.lastIndex = 0;
      found = pattern.test(this.text);
      pattern.lastIndex = 0;
      this.fileMatches.set(pattern, found);
    }
    return found;
  }
}

function runRule(rule: GuardRule, context: ScanContext, lines: readonly number[]): GuardFinding[] {
  if (rule.unless !== undefined && context.matchesAnywhere(rule.unless)) return [];
  if (rule.requires?.some((pattern) => !context.matchesAnywhere(pattern))) return [];
  const found: GuardFinding[] = [];
  const seenLines = new Set<number>();
  const { pattern } = rule;
  const text = context.text;
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    if (match[0] === "") pattern.lastIndex++; // never loop on an empty match
    if (rule.accept !== undefined && !rule.accept(match, context)) continue;
    if (rule.near !== undefined && !matchesNear(rule.near, text, match.index, match.index + match[0].length)) continue;
    const line = lineOf(lines, match.index);
    if (seenLines.has(line)) continue;
    seenLines.add(line);
    found.push({
      ruleId: rule.id,
      category: rule.category,
      severity: rule.severity,
      message: rule.message,
      line,
      excerpt: excerptOf(match[0]),
    });
    if (found.length >= MAX_FINDINGS_PER_RULE) break;
  }
  pattern.lastIndex = 0;
  return found;
}

function matchesNear(near: NonNullable<GuardRule["near"]>, text: string, start: number, end: number): boolean {
  let from = Math.max(0, start - near.before);
  if (near.sameLine === true) {
    for (let i = start - 1; i >= from; i--) {
      const c = text.charCodeAt(i);
      if (c === LF || c === CR) {
        from = i + 1;
        break;
      }
    }
  }
  const window = text.slice(from, Math.min(text.length, end + near.after));
  near.pattern.lastIndex = 0;
  const found = near.pattern.test(window);
  near.pattern.lastIndex = 0;
  return found;
}

/** A caution on the same line and category as a dangerous finding adds nothing (e.g. deep traversal to /etc/shadow). */
function dropCautionsShadowedByDangerous(findings: readonly GuardFinding[]): GuardFinding[] {
  const dangerous = new Set(findings.filter((f) => f.severity === "dangerous").map((f) => `${f.category}:${f.line}`));
  return findings.filter((f) => f.severity === "dangerous" || !dangerous.has(`${f.category}:${f.line}`));
}

const rank = (finding: GuardFinding): number => (finding.severity === "dangerous" ? 0 : 1);

function excerptOf(matched: string): string {
  const collapsed = matched.replace(/\s+/g, " ").trim();
  return collapsed.length <= EXCERPT_LENGTH ? collapsed : `${collapsed.slice(0, EXCERPT_LENGTH - 1)}…`;
}

/** Offsets at which lines start. Python ends lines at \n, \r\n and a lone \r, so we do too. */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === LF) starts.push(i + 1);
    else if (c === CR) {
      if (text.charCodeAt(i + 1) === LF) i++;
      starts.push(i + 1);
    }
  }
  return starts;
}

function lineOf(starts: readonly number[], offset: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if ((starts[mid] ?? 0) <= offset) low = mid;
    else high = mid - 1;
  }
  return low + 1;
}

// ── The code view ─────────────────────────────────────────────────────────────────────────────

/**
 * Code that can read its own text can execute its comments or docstrings, e.g.
 * `exec(open(__file__).read().split("#")[1])` or `os.system(f.__doc__)`. When any of these
 * appear, blanking would hide the payload, so the guard scans the source verbatim instead.
 */
const READS_OWN_SOURCE =
  /__file__|__doc__|__loader__|__spec__|__code__|co_consts|co_filename|f_code|argv\s{0,4}\[\s{0,4}0\s{0,4}\]|skill\.py|\/sandbox\b|\binspect\b|\blinecache\b|\btraceback\b|\btokenize\b|\bget_source\b|\b_getframe\b/;

/**
 * The text rules of view "code" see: the source with comments, and bare-string statements
 * (docstrings), replaced by spaces. Offsets and line breaks are preserved, so lines match the
 * source. Falls back to the source verbatim when blanking could hide something: the code reads
 * its own text, or the tokenizer lost track (an unterminated string: Python would refuse the code,
 * but the guard must not let a misread hide a payload).
 */
export function codeView(source: string): string {
  return describeCodeView(source).text;
}

/** How {@link codeView} treated a source: blanked, or verbatim and why. For tests and reports. */
export type CodeViewMode = "blanked" | "reads-own-source" | "untokenizable";

/** {@link codeView} with the reason for its choice. */
export function describeCodeView(source: string): { text: string; mode: CodeViewMode } {
  const blanked = blankCommentsAndDocstrings(source);
  if (blanked === undefined) return { text: source, mode: "untokenizable" };
  if (READS_OWN_SOURCE.test(blanked)) return { text: source, mode: "reads-own-source" };
  return { text: blanked, mode: "blanked" };
}

const LF = 0x0a;
const CR = 0x0d;
const HASH = 0x23;
const BACKSLASH = 0x5c;
const SINGLE_QUOTE = 0x27;
const DOUBLE_QUOTE = 0x22;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const COLON = 0x3a;
const SEMICOLON = 0x3b;
const SPACE = 0x20;

/** Lower-cased string prefixes Python accepts (`rb`, `Rb`, `F`…). */
const STRING_PREFIXES = new Set(["r", "u", "f", "b", "fr", "rf", "br", "rb"]);

/** Code at top level, or inside an f-string replacement field (`{…}`), possibly in its format spec. */
interface CodeFrame {
  readonly kind: "code";
  readonly inFString: boolean;
  depth: number;
  inSpec: boolean;
}
interface StringFrame {
  readonly kind: "string";
  readonly quote: number;
  readonly triple: boolean;
  readonly isF: boolean;
  /** Offset of the prefix, where blanking a docstring starts. */
  readonly start: number;
  readonly maybeDocstring: boolean;
  /** Finds the next character that matters inside this string. */
  readonly special: RegExp;
}
type Frame = CodeFrame | StringFrame;

// The tokenizer jumps from one character that matters to the next with these (native search is
// an order of magnitude faster than a JavaScript loop over every character).
const CODE_SPECIAL = /[#'"\\()[\]{}:;\n\r]/g;
const SPEC_SPECIAL = /[{}\\'"\n\r]/g;
const STRING_SPECIAL = {
  [DOUBLE_QUOTE]: { plain: /["\\\n\r]/g, f: /["\\\n\r{}]/g },
  [SINGLE_QUOTE]: { plain: /['\\\n\r]/g, f: /['\\\n\r{}]/g },
} as const;

const isLineBreak = (c: number): boolean => c === LF || c === CR;
const isBlank = (c: number): boolean => c === SPACE || c === 0x09 || c === 0x0c;
const isIdentifierChar = (c: number): boolean =>
  (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || c >= 0x80;

/** Offset of the next match of `special` at or after `from`, or `end` when there is none. */
function nextSpecial(special: RegExp, source: string, from: number): number {
  special.lastIndex = from;
  const match = special.exec(source);
  return match === null ? source.length : match.index;
}

/**
 * One linear pass of a small Python tokenizer: strings (all prefixes, triple quotes, escapes,
 * f-strings with nested replacement fields and format specs, as Python 3.12 reads them, which
 * is a superset of 3.11), comments, brackets and logical lines. Returns undefined when a string
 * is left unterminated or an f-string field is malformed.
 */
function blankCommentsAndDocstrings(source: string): string | undefined {
  const n = source.length;
  const blanks: Array<[number, number]> = [];
  const stack: Frame[] = [{ kind: "code", inFString: false, depth: 0, inSpec: false }];
  // Offset of the first token of the current top-level statement: a string there that is
  // the whole statement is a docstring or a no-op, and never runs.
  let statementStart = skipBlanks(source, 0, true);
  let i = statementStart;
  while (i < n) {
    const frame = stack[stack.length - 1];
    if (frame === undefined) return undefined;

    if (frame.kind === "string") {
      i = nextSpecial(frame.special, source, i);
      if (i >= n) return undefined; // unterminated string
      const c = source.charCodeAt(i);
      if (c === BACKSLASH) {
        i += source.charCodeAt(i + 1) === CR && source.charCodeAt(i + 2) === LF ? 3 : 2;
      } else if (c === frame.quote) {
        if (frame.triple && !(source.charCodeAt(i + 1) === c && source.charCodeAt(i + 2) === c)) {
          i++;
          continue;
        }
        i += frame.triple ? 3 : 1;
        stack.pop();
        if (frame.maybeDocstring && endsStatement(source, i)) blanks.push([frame.start, i]);
      } else if (isLineBreak(c)) {
        if (!frame.triple) return undefined; // unterminated single-quoted string
        i++;
      } else if (c === OPEN_BRACE) {
        if (source.charCodeAt(i + 1) === OPEN_BRACE) i += 2;
        else {
          stack.push({ kind: "code", inFString: true, depth: 0, inSpec: false });
          i++;
        }
      } else {
        i += source.charCodeAt(i + 1) === CLOSE_BRACE ? 2 : 1; // `}}` is a literal brace
      }
      continue;
    }

    if (frame.inSpec) {
      // A format spec (`{x:#>{width}}`) is literal text: `#` there is not a comment.
      i = nextSpecial(SPEC_SPECIAL, source, i);
      if (i >= n) return undefined;
      const c = source.charCodeAt(i);
      if (c === OPEN_BRACE) stack.push({ kind: "code", inFString: true, depth: 0, inSpec: false });
      else if (c === CLOSE_BRACE) stack.pop();
      else if (c === BACKSLASH) i++;
      else if (isLineBreak(c) || c === enclosingQuote(stack)) return undefined; // ends the string mid-field
      i++;
      continue;
    }

    i = nextSpecial(CODE_SPECIAL, source, i);
    if (i >= n) break;
    const c = source.charCodeAt(i);
    if (c === HASH) {
      const end = nextLineBreak(source, i);
      blanks.push([i, end]);
      i = end;
    } else if (c === SINGLE_QUOTE || c === DOUBLE_QUOTE) {
      let prefixStart = i;
      while (prefixStart > 0 && isIdentifierChar(source.charCodeAt(prefixStart - 1))) prefixStart--;
      const prefix = source.slice(prefixStart, i).toLowerCase();
      if (!STRING_PREFIXES.has(prefix)) prefixStart = i; // an identifier before a plain string (`else"x"`)
      const triple = source.charCodeAt(i + 1) === c && source.charCodeAt(i + 2) === c;
      const isF = prefix.includes("f") && prefixStart < i;
      const maybeDocstring = !frame.inFString && !isF && statementStart === prefixStart;
      const special = STRING_SPECIAL[c][isF ? "f" : "plain"];
      stack.push({ kind: "string", quote: c, triple, isF, start: prefixStart, maybeDocstring, special });
      i += triple ? 3 : 1;
    } else if (c === BACKSLASH) {
      // Line continuation: the next line continues this statement.
      i += source.charCodeAt(i + 1) === CR && source.charCodeAt(i + 2) === LF ? 3 : 2;
    } else if (isLineBreak(c) || c === SEMICOLON) {
      if (!frame.inFString && frame.depth === 0) {
        statementStart = skipBlanks(source, i + 1, isLineBreak(c));
        i = statementStart;
      } else i++;
    } else if (c === COLON) {
      if (frame.inFString && frame.depth === 0) frame.inSpec = true;
      i++;
    } else if (c === 0x28 || c === 0x5b || c === OPEN_BRACE) {
      frame.depth++;
      i++;
    } else {
      // A closing bracket.
      if (frame.inFString && frame.depth === 0) {
        if (c !== CLOSE_BRACE) return undefined;
        stack.pop(); // end of the replacement field
      } else if (frame.depth > 0) frame.depth--;
      i++;
    }
  }
  if (stack.length !== 1) return undefined;
  return applyBlanks(source, blanks);
}

/** The first offset at or after `from` that is not a blank (nor, if asked, a line break). */
function skipBlanks(source: string, from: number, lineBreaksToo: boolean): number {
  let i = from;
  for (; i < source.length; i++) {
    const c = source.charCodeAt(i);
    if (!isBlank(c) && !(lineBreaksToo && isLineBreak(c))) break;
  }
  return i;
}

function nextLineBreak(source: string, from: number): number {
  let i = from;
  while (i < source.length && !isLineBreak(source.charCodeAt(i))) i++;
  return i;
}

/** The quote of the f-string whose replacement field is on top of the stack. */
function enclosingQuote(stack: readonly Frame[]): number | undefined {
  const below = stack[stack.length - 2];
  return below?.kind === "string" ? below.quote : undefined;
}

/** After a bare string: only blanks, then a comment, a line break or the end (so the statement is just the string). */
function endsStatement(source: string, from: number): boolean {
  const i = skipBlanks(source, from, false);
  if (i >= source.length) return true;
  const c = source.charCodeAt(i);
  return c === HASH || isLineBreak(c);
}

/** Replaces every character in the ranges, except line breaks, with a space. */
function applyBlanks(source: string, blanks: ReadonlyArray<readonly [number, number]>): string {
  if (blanks.length === 0) return source;
  const units = Buffer.from(source, "utf16le");
  for (const [start, end] of blanks) {
    for (let i = start; i < end; i++) {
      if (!isLineBreak(source.charCodeAt(i))) units.writeUInt16LE(SPACE, i * 2);
    }
  }
  return units.toString("utf16le");
}
