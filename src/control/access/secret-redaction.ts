/**
 * Redaction of a run's secrets from what it returns (docs/security.md#redaction): every occurrence
 * of a value the run received, and of the forms a skill prints it in by accident (base64 standard
 * and URL-safe, with and without padding and at any offset inside longer base64; hex in either
 * case; percent-encoding in any case, `+` for a space; JSON string escapes), becomes
 * `[secret:NAME]`. A stream the sandbox cut at its output limit may end in the first characters of
 * a value: that trailing prefix (at least {@link MIN_REDACTED_PREFIX} characters) is redacted too.
 *
 * Pure: no I/O, the same input gives the same output. Literal forms are found with `indexOf`; the
 * percent-encoded forms by decoding the text once (only when it holds a `%` or a `+`) and searching
 * the value's bytes in that, so a megabyte of output with 32 secrets costs milliseconds whatever the
 * values repeat. No regex is ever built from a value: its source would carry the value into any
 * error that quotes it.
 */
import { createHash } from "node:crypto";
import type { ExecutionResult, RunOutputFile } from "../../execution/index.js";

/** The shortest trailing prefix of a value that is redacted at the end of a cut stream. */
export const MIN_REDACTED_PREFIX = 4;

/** What replaces an occurrence of the secret `name`. */
export function redactionMark(name: string): string {
  return `[secret:${name}]`;
}

interface Span {
  readonly start: number;
  readonly end: number;
  readonly name: string;
}

interface SecretForms {
  readonly name: string;
  /** Every literal form, longest first; the value itself among them. */
  readonly literals: readonly string[];
  /** Forms whose first characters may end a cut stream: the value, its whole base64 and hex. */
  readonly prefixable: readonly string[];
  /** The value's UTF-8 bytes: what percent-decoded text is searched for. */
  readonly bytes: Buffer;
}

/** Replaces the values of one run's secrets in text (see the module comment). */
export class SecretRedactor {
  private readonly secrets: SecretForms[];

  /** `values`: name → value, as the run received them. Empty values are ignored (there is nothing to find). */
  constructor(values: ReadonlyMap<string, string>) {
    this.secrets = [...values]
      .filter(([, value]) => value.length > 0)
      .map(([name, value]) => ({ name, bytes: Buffer.from(value, "utf8"), ...formsOf(value) }));
  }

  /** True when there is nothing to redact (no secret, or only empty ones). */
  get empty(): boolean {
    return this.secrets.length === 0;
  }

  /**
   * `text` with every occurrence replaced. `cut`: the text is the start of something longer (a
   * stream the sandbox truncated, a clipped summary), so its last characters may begin a value.
   */
  redact(text: string, cut = false): string {
    if (this.secrets.length === 0 || text.length === 0) return text;
    const spans: Span[] = [];
    // Percent-encoding, `+` read as a space (query strings, quote_plus) and as itself (a `+` left as it is).
    if (text.includes("%")) percentDecodedSpans(text, this.secrets, false, spans);
    if (text.includes("%") || text.includes("+")) percentDecodedSpans(text, this.secrets, true, spans);
    for (const secret of this.secrets) {
      for (const form of secret.literals) {
        for (let at = text.indexOf(form); at >= 0; at = text.indexOf(form, at + form.length)) {
          spans.push({ start: at, end: at + form.length, name: secret.name });
        }
      }
      if (cut) {
        for (const form of secret.prefixable) {
          const length = longestPrefixAtEnd(form, text);
          if (length >= MIN_REDACTED_PREFIX && length < form.length) {
            spans.push({ start: text.length - length, end: text.length, name: secret.name });
          }
        }
      }
    }
    return spans.length === 0 ? text : replaceSpans(text, spans);
  }

  /**
   * A run's result as the control plane passes it on: stdout, stderr, the error summary, the file
   * and network warnings and every returned file's path and UTF-8 text redacted (see {@link redactResult}).
   */
  result(result: ExecutionResult): ExecutionResult {
    return this.empty ? result : redactResult(result, this);
  }
}

/**
 * `result` redacted by `redactor`. A returned file is redacted when its bytes are UTF-8 text (a
 * truncated file's incomplete last character aside); a redacted file that came back whole gets the
 * size and SHA-256 of what is returned, since a digest of the original would let a weak value be
 * guessed offline; a truncated one keeps the whole file's. Binary files are returned as they are.
 */
export function redactResult(result: ExecutionResult, redactor: SecretRedactor): ExecutionResult {
  const summary = result.errorSummary;
  const clipped = summary.endsWith("…");
  return {
    ...result,
    stdout: redactor.redact(result.stdout, result.stdoutTruncated),
    stderr: redactor.redact(result.stderr, result.stderrTruncated),
    errorSummary: clipped ? `${redactor.redact(summary.slice(0, -1), true)}…` : redactor.redact(summary),
    ...(result.outputFiles ? { outputFiles: result.outputFiles.map((file) => redactFile(file, redactor)) } : {}),
    ...(result.fileWarnings ? { fileWarnings: result.fileWarnings.map((warning) => redactor.redact(warning)) } : {}),
    // A refused host's name is the skill's choice, so a value may be hidden in one.
    ...(result.networkWarnings ? { networkWarnings: result.networkWarnings.map((warning) => redactor.redact(warning)) } : {}),
  };
}

function redactFile(file: RunOutputFile, redactor: SecretRedactor): RunOutputFile {
  const path = redactor.redact(file.path);
  const text = utf8Text(file.content, file.truncated);
  if (text === undefined) return path === file.path ? file : { ...file, path };
  const redacted = redactor.redact(text.text, file.truncated);
  if (redacted === text.text) return path === file.path ? file : { ...file, path };
  const content = Buffer.concat([Buffer.from(redacted, "utf8"), text.rest]);
  if (file.truncated) return { ...file, path, content };
  return { ...file, path, content, sizeBytes: content.length, sha256: createHash("sha256").update(content).digest("hex") };
}

/** The bytes as UTF-8 text, or undefined when they are not; a cut file's incomplete last character is kept apart as `rest`. */
function utf8Text(bytes: Buffer, cut: boolean): { text: string; rest: Buffer } | undefined {
  try {
    const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
    const text = decoder.decode(bytes, { stream: cut });
    return { text, rest: bytes.subarray(Buffer.byteLength(text, "utf8")) };
  } catch {
    return undefined;
  }
}

/** The spans merged where they overlap or touch, each replaced by the mark of the first secret found there. */
function replaceSpans(text: string, spans: Span[]): string {
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  let out = "";
  let at = 0;
  let current: { start: number; end: number; name: string } | undefined;
  for (const span of spans) {
    if (current && span.start <= current.end) {
      current.end = Math.max(current.end, span.end);
      continue;
    }
    if (current) {
      out += text.slice(at, current.start) + redactionMark(current.name);
      at = current.end;
    }
    current = { ...span };
  }
  if (current) {
    out += text.slice(at, current.start) + redactionMark(current.name);
    at = current.end;
  }
  return out + text.slice(at);
}

/** The literal forms of a value (see the module comment), and those whose prefix may end a cut stream. */
function formsOf(value: string): { literals: string[]; prefixable: string[] } {
  const bytes = Buffer.from(value, "utf8");
  const base64 = bytes.toString("base64");
  const base64Url = bytes.toString("base64url");
  const whole = [base64, base64.replace(/=+$/, ""), base64Url, `${base64Url}${"=".repeat(base64.length - base64Url.length)}`];
  const hex = [bytes.toString("hex"), bytes.toString("hex").toUpperCase()];
  const literals = new Set<string>([value, ...whole, ...hex, pythonJsonEscaped(value), JSON.stringify(value).slice(1, -1)]);
  // Inside longer base64 (the value after 0, 1 or 2 other bytes), only the characters made of the
  // value's bits alone are the same whatever surrounds it.
  for (const offset of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]);
    const from = Math.ceil((offset * 8) / 6);
    const to = Math.floor(((offset + bytes.length) * 8) / 6);
    const core = encoded.toString("base64").slice(from, to);
    if (core.length >= MIN_REDACTED_PREFIX) {
      literals.add(core);
      literals.add(encoded.toString("base64url").slice(from, to));
    }
  }
  literals.delete("");
  return {
    literals: [...literals].sort((a, b) => b.length - a.length),
    prefixable: [...new Set([value, base64, base64Url, ...hex])],
  };
}

/** The value as Python's `json.dumps` writes it inside its quotes (ASCII only, `\uXXXX` lower case). */
function pythonJsonEscaped(value: string): string {
  const named: Record<string, string> = { '"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f" };
  let out = "";
  for (let i = 0; i < value.length; i++) {
    const char = value.charAt(i);
    const code = value.charCodeAt(i);
    out += named[char] ?? (code < 0x20 || code > 0x7e ? `\\u${code.toString(16).padStart(4, "0")}` : char);
  }
  return out;
}

/**
 * Finds the values in `text` read as percent-encoded (`%XX` in either case is the byte XX; with
 * `plusIsSpace`, `+` is a space; every other character is its UTF-8 bytes): the text is decoded once,
 * each decoded byte remembering the characters it came from, and each value's bytes are searched in
 * that. Linear in the text, however many characters are encoded and whichever encoder did it.
 */
function percentDecodedSpans(text: string, secrets: readonly SecretForms[], plusIsSpace: boolean, spans: Span[]): void {
  const capacity = Buffer.byteLength(text, "utf8");
  const decoded = Buffer.allocUnsafe(capacity);
  const from = new Int32Array(capacity);
  const to = new Int32Array(capacity);
  let size = 0;
  for (let i = 0; i < text.length;) {
    const code = text.charCodeAt(i);
    let byte = code;
    let width = 1;
    if (code === 0x25 && i + 2 < text.length && isHexDigit(text.charCodeAt(i + 1)) && isHexDigit(text.charCodeAt(i + 2))) {
      byte = (hexValue(text.charCodeAt(i + 1)) << 4) | hexValue(text.charCodeAt(i + 2));
      width = 3;
    } else if (code === 0x2b && plusIsSpace) {
      byte = 0x20;
    } else if (code >= 0x80) {
      const point = text.codePointAt(i) as number;
      width = point > 0xffff ? 2 : 1;
      for (const part of utf8Bytes(point)) {
        decoded[size] = part;
        from[size] = i;
        to[size] = i + width;
        size++;
      }
      i += width;
      continue;
    }
    decoded[size] = byte;
    from[size] = i;
    to[size] = i + width;
    size++;
    i += width;
  }
  const view = decoded.subarray(0, size);
  for (const secret of secrets) {
    const needle = secret.bytes;
    for (let at = view.indexOf(needle); at >= 0; at = view.indexOf(needle, at + needle.length)) {
      spans.push({ start: from[at] as number, end: to[at + needle.length - 1] as number, name: secret.name });
    }
  }
}

/** A code point's UTF-8 bytes (a lone surrogate as U+FFFD, as Buffer.from writes it). */
function utf8Bytes(point: number): number[] {
  if (point < 0x800) return [0xc0 | (point >> 6), 0x80 | (point & 0x3f)];
  if (point >= 0xd800 && point <= 0xdfff) return [0xef, 0xbf, 0xbd];
  if (point < 0x10000) return [0xe0 | (point >> 12), 0x80 | ((point >> 6) & 0x3f), 0x80 | (point & 0x3f)];
  return [0xf0 | (point >> 18), 0x80 | ((point >> 12) & 0x3f), 0x80 | ((point >> 6) & 0x3f), 0x80 | (point & 0x3f)];
}

function hexValue(code: number): number {
  return code <= 0x39 ? code - 0x30 : (code | 0x20) - 0x57;
}

function isHexDigit(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x46) || (code >= 0x61 && code <= 0x66);
}

/**
 * The length of the longest prefix of `form` that `text` ends with (Knuth–Morris–Pratt over the
 * text's last characters): linear in both, whatever the value repeats.
 */
function longestPrefixAtEnd(form: string, text: string): number {
  if (form.length === 0) return 0;
  const failure = new Int32Array(form.length);
  for (let i = 1, k = 0; i < form.length; i++) {
    while (k > 0 && form[i] !== form[k]) k = failure[k - 1] as number;
    if (form[i] === form[k]) k++;
    failure[i] = k;
  }
  let state = 0;
  for (let i = Math.max(0, text.length - form.length); i < text.length; i++) {
    while (state > 0 && (state === form.length || text[i] !== form[state])) state = failure[state - 1] as number;
    if (text[i] === form[state]) state++;
  }
  return state;
}
