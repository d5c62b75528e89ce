import { type Candidate, lineAt, plural, type SyntaxFailure } from "./normalize-repair.js";

export type LexState = "code" | "comment" | "string";

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
export function unescapeNewlines(text: string, keepInComments: ReadonlySet<number> = new Set()): Unescaped {
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
export function retryKeepingCommentEscape(text: string, previous: Unescaped, kept: ReadonlySet<number>) {
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
