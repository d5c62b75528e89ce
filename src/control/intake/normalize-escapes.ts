import { type LexState, retryKeepingCommentEscape, unescapeNewlines } from "./normalize-newlines.js";
import { type Candidate, countNewlines, plural } from "./normalize-repair.js";

export function jsonStringValue(text: string): string | undefined {
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
export function undoEscapes(text: string): Candidate[] {
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
