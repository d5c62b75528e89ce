/**
 * Tool sequences as patterns (docs/learning.md#patterns): what a tool call looks like once its
 * values are gone, which windows of a session count, and how two sequences overlap. Pure functions.
 */
import { createHash } from "node:crypto";

/** One step of a sequence: the tool and the canonical shape of its arguments. */
export interface SequenceStep {
  readonly tool: string;
  readonly shape: string;
}

/** A window of consecutive calls of one session. */
export interface SessionWindow {
  readonly hash: string;
  /** Index of its first call in the session. */
  readonly start: number;
  readonly length: number;
}

/**
 * The JSON shape of a value: keys and JSON types, never values. Objects list their keys sorted
 * (`{a:number,b:{c:string}}`), arrays are `array` whatever they hold (their length and contents are
 * values), numbers are `number` whether integral or not (so 1 and 1.5 cannot hash apart).
 */
export function shapeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return typeof value;
  if (typeof value === "object") {
    const entries = Object.keys(value as Record<string, unknown>)
      .sort()
      .map((key) => `${key}:${shapeOf((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(",")}}`;
  }
  return "null";
}

/** The token a step contributes to a hash. */
function stepToken(step: SequenceStep): string {
  return `${step.tool}(${step.shape})`;
}

/** Hex characters kept of a pattern's sha256: 128 bits, collision-free at any realistic count, half the storage. */
const HASH_CHARS = 32;

/** sha256 (first 128 bits, hex) of a sequence's tool names and shapes. */
export function sequenceHash(steps: readonly SequenceStep[]): string {
  const hash = createHash("sha256");
  for (const step of steps) hash.update(stepToken(step)).update("\n");
  return hash.digest("hex").slice(0, HASH_CHARS);
}

/**
 * Every window of `minLength`..`maxLength` consecutive calls, shortest first, then by position,
 * repeats included; lazy, so a large session can be hashed in slices (docs/learning.md#large-sessions).
 */
export function* allWindows(steps: readonly SequenceStep[], minLength: number, maxLength: number): Generator<SessionWindow> {
  const tokens = steps.map(stepToken);
  for (let length = minLength; length <= maxLength; length++) {
    for (let start = 0; start + length <= tokens.length; start++) {
      const hash = createHash("sha256");
      for (let i = start; i < start + length; i++) hash.update(tokens[i] as string).update("\n");
      yield { hash: hash.digest("hex").slice(0, HASH_CHARS), start, length };
    }
  }
}

/** One entry per distinct hash, its first position: a session contributes each pattern once however often it repeats it. */
export function distinctWindows(windows: Iterable<SessionWindow>): SessionWindow[] {
  const seen = new Map<string, SessionWindow>();
  for (const window of windows) if (!seen.has(window.hash)) seen.set(window.hash, window);
  return [...seen.values()];
}

/** Every window of `minLength`..`maxLength` consecutive calls, one entry per distinct hash (its first position). */
export function sessionWindows(steps: readonly SequenceStep[], minLength: number, maxLength: number): SessionWindow[] {
  return distinctWindows(allWindows(steps, minLength, maxLength));
}

/** A window with the number of distinct sessions its pattern appeared in. */
export interface CountedWindow extends SessionWindow {
  readonly sessions: number;
}

/**
 * Which frequent windows of one session become new candidates (docs/learning.md#which-windows-count):
 * 1. only windows seen in at least `threshold` distinct sessions;
 * 2. closed: a window inside a longer frequent window seen in as many sessions is dropped (the longer
 *    one explains it);
 * 3. no overlap: longest first (then most sessions, then earliest), a window overlapping one already
 *    chosen is dropped;
 * 4. at most `limit` per session.
 */
export function selectCandidateWindows(windows: readonly CountedWindow[], threshold: number, limit: number): CountedWindow[] {
  const frequent = windows.filter((w) => w.sessions >= threshold);
  const longest = frequent.reduce((max, w) => Math.max(max, w.length), 0);
  // A number per position (not a string): a large session has tens of thousands of frequent windows.
  const position = (start: number, length: number): number => start * (longest + 1) + length;
  const byPosition = new Map(frequent.map((w) => [position(w.start, w.length), w]));
  // Only windows that can contain w are looked up: longer, starting at most (length - w.length) before it.
  const explained = (w: CountedWindow): boolean => {
    for (let length = w.length + 1; length <= longest; length++) {
      for (let start = Math.max(0, w.start + w.length - length); start <= w.start; start++) {
        const o = byPosition.get(position(start, length));
        if (o && o.sessions >= w.sessions) return true;
      }
    }
    return false;
  };
  const closed = frequent.filter((w) => !explained(w));
  closed.sort((a, b) => b.length - a.length || b.sessions - a.sessions || a.start - b.start);
  const chosen: CountedWindow[] = [];
  for (const window of closed) {
    if (chosen.length >= limit) break;
    const overlaps = chosen.some((c) => window.start < c.start + c.length && c.start < window.start + window.length);
    if (!overlaps) chosen.push(window);
  }
  return chosen.sort((a, b) => a.start - b.start);
}

/**
 * Overlap of two tool sequences (docs/learning.md#overlap): the length of their longest common
 * subsequence of tool names divided by the length of the longer one. 1 for the same tools in the
 * same order; a 5-step sequence with one step changed or added overlaps 0.8.
 */
export function sequenceOverlap(a: readonly string[], b: readonly string[]): number {
  if (a.length === 0 || b.length === 0) return 0;
  let previous = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    const current = new Array<number>(b.length + 1).fill(0);
    for (let j = 1; j <= b.length; j++) {
      current[j] = a[i - 1] === b[j - 1] ? (previous[j - 1] as number) + 1 : Math.max(previous[j] as number, current[j - 1] as number);
    }
    previous = current;
  }
  return (previous[b.length] as number) / Math.max(a.length, b.length);
}

/** A candidate's description: mechanical, from the tool names and shapes (docs/learning.md#candidates). */
export function mechanicalDescription(steps: readonly SequenceStep[]): string {
  return `Runs ${steps.length} tools in sequence, as observed in repeated sessions: ${steps.map(stepToken).join(" → ")}`;
}

/** A skill name from the tool names: `auto_<tool>_<tool>…_<hash prefix>`, at most 64 characters. */
export function derivedSkillName(steps: readonly SequenceStep[], hash: string): string {
  const suffix = `_${hash.slice(0, 8)}`;
  const body = `auto_${steps.map((s) => s.tool.replace(/[^A-Za-z0-9_]/g, "_")).join("_")}`;
  return `${body.slice(0, 64 - suffix.length)}${suffix}`;
}
