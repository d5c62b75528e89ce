import { InvalidArgumentError } from "../../errors/index.js";
import { diagnose, traceRepairs } from "./normalize-diagnosis.js";
import { decodeEntities, entityEscapedByEvidence } from "./normalize-entities.js";
import { jsonStringValue, undoEscapes } from "./normalize-escapes.js";
import { extractFences } from "./normalize-fences.js";
import { removeCommonIndentation } from "./normalize-indentation.js";
import { type Candidate, ParseCache, type RepairKind } from "./normalize-repair.js";
import { stripCdata, stripXmlTags } from "./normalize-wrappers.js";
import type { ImportedModule, PythonSyntaxChecker } from "./python-syntax.js";

/** Skill code as it will be stored, and what was done to it on the way in. */
export interface NormalizedCode {
  readonly code: string;
  /** One human-readable line per applied repair, for the calling agent to learn from. Empty for clean code. */
  readonly normalizations: readonly string[];
  /** What `code` imports, as its parse listed it (docs/packages.md#the-dependency-scan). */
  readonly imports: readonly ImportedModule[];
}

/**
 * Undoes what LLM tool-call parsers do to code: CDATA envelopes and leaked XML tags, HTML
 * entities, markdown fences, JSON string escaping and literal `\n` escapes, and indentation
 * common to every line, alone or combined. Every repair is gated by CPython's parser:
 *
 * - code that parses is returned unchanged, byte for byte (one parse). The one exception is an
 *   inert program (see `SyntaxVerdict`: only comments, a docstring or one string literal) that
 *   a repair turns into a real one: `#!/usr/bin/env python3\nimport sys\n…` on one line
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
  // Every text returned below was parsed through the cache, which keeps its imports.
  const normalized = (code: string, normalizations: readonly string[]): NormalizedCode => ({
    code,
    normalizations,
    imports: parses.importsOf(code),
  });
  const rawVerdict = await parses.check(raw);
  if (rawVerdict.ok && !rawVerdict.inert) return normalized(raw, []);
  const { found, inert } = await search(raw, parses);
  if (found) {
    const decoded = await decodeEvidentEntities(found, parses);
    return normalized(decoded.text, decoded.notes);
  }
  // Valid code that only a real program may replace: it stays as it came.
  if (rawVerdict.ok) return normalized(raw, []);
  if (inert) return normalized(inert.text, inert.notes);
  const trace = await traceRepairs(raw, parses);
  // Only reachable when the search ran out of budget before reaching the traced chain.
  if (trace.verdict.ok) return normalized(trace.text, trace.steps);
  throw new InvalidArgumentError("code", diagnose(raw, trace, trace.verdict));
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

/** Beyond this many parses a search is not worth its cost; real manglings need far fewer. */
const MAX_SEARCH_PARSES = 40;
/** Longest repair sequence tried, e.g. CDATA, then fence, then entities, then escapes. */
const MAX_DEPTH = 4;

interface SearchState {
  readonly text: string;
  readonly notes: string[];
  readonly kinds: RepairKind[];
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
