/**
 * How one condition is evaluated (docs/composition.md#conditions), inside the condition host's
 * child process (`condition-host-main.ts`), never in the service's own: JSONata checks its time and
 * depth limits only between evaluation steps, so a single built-in call (a `$pad` to 250 million
 * characters) runs unchecked, and an allocation V8 cannot make aborts the whole process. What is
 * bounded here gives those a clear message; the child's memory cap and the host's wall-clock kill
 * bound the rest.
 *
 * This module imports nothing of the service, so the child stays small.
 */
import jsonata from "jsonata";

/** docs/composition.md#conditions: the box every evaluation runs in. */
export const CONDITION_LIMITS = {
  /**
   * JSONata's own time limit, checked between evaluation steps: a loop ends with its message. Half
   * the wall clock, so a busy machine does not fail a condition that is merely slow to be scheduled,
   * and a looping one still ends with JSONata's message before the host kills the process.
   */
  timeoutMs: 500,
  /** JSONata's evaluation depth. */
  stackDepth: 200,
  /** Items in one sequence (and one range). */
  sequenceLength: 10_000,
  /** Characters of one string that `$pad`, `$join` or `$replace` may build. */
  stringChars: 1_000_000,
  /** Wall-clock time of one evaluation, after which the host kills the process running it. */
  wallClockMs: 1_000,
  /** V8 heap (old space) of the process that evaluates, in MiB. */
  heapMiB: 256,
  /** V8 semi-space (young generation, per half) of that process, in MiB. */
  semiSpaceMiB: 16,
} as const;

/** What a condition is wrapped in before evaluation, so every value is cast as `$boolean` casts it. */
const WRAPPER_PREFIX = "$boolean((";

/** A regex engine that refuses: conditions get no regular expressions (a single match cannot be interrupted). */
class NoRegex {
  constructor() {
    throw new Error("regular expressions are not available in conditions");
  }
}

/** The options every condition's expression is compiled with (also by the pre-flight's parse). */
export function conditionOptions(): jsonata.JsonataOptions {
  return {
    timeout: CONDITION_LIMITS.timeoutMs,
    stack: CONDITION_LIMITS.stackDepth,
    sequence: CONDITION_LIMITS.sequenceLength,
    RegexEngine: NoRegex as unknown as RegExpConstructor,
  };
}

/** A JSONata built-in as evaluating `$name` yields it. */
interface BuiltIn {
  readonly implementation: (this: unknown, ...args: unknown[]) => unknown;
}

/** The library's own `$pad`, `$join` and `$replace`, which the bounded versions call once their result is known to fit. */
let builtIns: Promise<{ pad: BuiltIn; join: BuiltIn; replace: BuiltIn }> | undefined;

function libraryBuiltIns(): Promise<{ pad: BuiltIn; join: BuiltIn; replace: BuiltIn }> {
  builtIns ??= jsonata("[$pad, $join, $replace]")
    .evaluate({})
    .then((found: unknown) => {
      const [pad, join, replace] = found as BuiltIn[];
      if (!pad?.implementation || !join?.implementation || !replace?.implementation) {
        throw new Error("jsonata's $pad, $join or $replace is not where this module expects it");
      }
      return { pad, join, replace };
    });
  return builtIns;
}

function tooLong(fn: string, chars: number): Error {
  return new Error(`${fn} would build a string of ${chars} characters; the limit is ${CONDITION_LIMITS.stringChars}`);
}

/** Registers bounded versions of the built-ins that build a long string out of short arguments. */
async function bound(expression: jsonata.Expression): Promise<void> {
  const { pad, join, replace } = await libraryBuiltIns();
  const limit = CONDITION_LIMITS.stringChars;
  // Same signatures as the library's, so arguments arrive validated and cast exactly as before.
  expression.registerFunction(
    "pad",
    function (this: unknown, str: unknown, width: unknown, char: unknown) {
      if (typeof width === "number" && Math.abs(Math.trunc(width)) > limit) throw tooLong("$pad", Math.abs(Math.trunc(width)));
      return pad.implementation.call(this, str, width, char);
    },
    "<s-ns?:s>",
  );
  expression.registerFunction(
    "join",
    function (this: unknown, strs: unknown, separator: unknown) {
      if (Array.isArray(strs)) {
        const gaps = Math.max(0, strs.length - 1) * (typeof separator === "string" ? separator.length : 0);
        const chars = strs.reduce((sum: number, s: unknown) => sum + (typeof s === "string" ? s.length : 0), gaps);
        if (chars > limit) throw tooLong("$join", chars);
      }
      return join.implementation.call(this, strs, separator);
    },
    "<a<s>s?:s>",
  );
  expression.registerFunction(
    "replace",
    function (this: unknown, str: unknown, pattern: unknown, replacement: unknown, count: unknown) {
      // Regular expressions are refused, so a pattern is a string and a replacement a string: the result's size is known.
      if (typeof str === "string" && typeof pattern === "string" && pattern !== "" && typeof replacement === "string") {
        const most = typeof count === "number" ? count : Infinity;
        let matches = 0;
        for (let at = str.indexOf(pattern); at !== -1 && matches < most; at = str.indexOf(pattern, at + pattern.length)) matches++;
        const chars = str.length + matches * (replacement.length - pattern.length);
        if (chars > limit) throw tooLong("$replace", chars);
      }
      return replace.implementation.call(this, str, pattern, replacement, count);
    },
    "<s-(sf)(sf)n?:s>",
  );
}

/** Compiled conditions of this process, by text; the oldest goes first past the bound. */
const compiled = new Map<string, jsonata.Expression>();
const COMPILED_KEPT = 256;

async function expressionOf(text: string): Promise<jsonata.Expression> {
  const known = compiled.get(text);
  if (known) return known;
  const expression = jsonata(`${WRAPPER_PREFIX}${text}))`, conditionOptions());
  await bound(expression);
  if (compiled.size >= COMPILED_KEPT) compiled.delete(compiled.keys().next().value as string);
  compiled.set(text, expression);
  return expression;
}

/**
 * Evaluates `text` over `scope` ({params, steps}): true when the step should run. Throws an Error
 * whose message is JSONata's (positions point into `text`) or a bound's.
 */
export async function evaluateCondition(text: string, scope: unknown): Promise<boolean> {
  try {
    return (await (await expressionOf(text)).evaluate(scope)) === true;
  } catch (error) {
    throw new Error(jsonataMessage(error, WRAPPER_PREFIX.length), { cause: error });
  }
}

/** JSONata's error (an object with code, message and position) as one line; `shift` moves positions back into the caller's text. */
export function jsonataMessage(error: unknown, shift = 0): string {
  if (error && typeof error === "object") {
    const { message, position, code } = error as { message?: unknown; position?: unknown; code?: unknown };
    const where = typeof position === "number" && position - shift > 0 ? ` (at character ${position - shift})` : "";
    if (typeof message === "string") return `${message}${where}`;
    if (typeof code === "string") return `${code}${where}`;
  }
  return String(error);
}
