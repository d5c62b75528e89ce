import { decodeEntities, ENTITY, ENTITY_ON_LINE } from "./normalize-entities.js";
import { undoEscapes } from "./normalize-escapes.js";
import { extractFences } from "./normalize-fences.js";
import { countMatches, countNewlines, lineAt, type ParseCache, plural, type SyntaxFailure } from "./normalize-repair.js";
import { LEADING_CDATA, stripCdata, stripXmlTags } from "./normalize-wrappers.js";
import type { SyntaxVerdict } from "./python-syntax.js";

// Diagnosis, when no repair yields valid Python.

/** An envelope opened where the code should start (after whitespace or tags) and never closed. */
const UNCLOSED_CDATA = new RegExp(`${LEADING_CDATA.source}(?![\\s\\S]*\\]\\]>)`);

export interface Trace {
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
export async function traceRepairs(raw: string, parses: ParseCache): Promise<Trace> {
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
export function diagnose(raw: string, trace: Trace, verdict: SyntaxFailure): string {
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
