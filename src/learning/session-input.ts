/**
 * What RecordSession accepts (docs/learning.md#limits): a session's size as a whole is checked before
 * any of it is parsed, then each call, in slices so a large session does not hold the event loop.
 */
import { errorMessage, InvalidArgumentError } from "../errors/index.js";
import { shapeOf } from "./sequence.js";
import { mapInSlices, type Slicing } from "./slices.js";

/** Limits of one field of a session, fixed (docs/learning.md#limits). */
export const SESSION_FIELD_LIMITS = {
  keyChars: 256,
  toolChars: 128,
  argumentChars: 64 * 1024,
  /** Objects and arrays inside one another in one call's arguments: `{}` is 1 level, `{"a": []}` 2. */
  argumentDepth: 64,
} as const;

/** The size of a whole session (settings; docs/learning.md#limits). */
export interface SessionSizeLimits {
  /** Tool calls in one session. */
  readonly maxSessionCalls: number;
  /** UTF-8 bytes of one session's tool names and arguments, all calls together. */
  readonly maxSessionBytes: number;
}

export interface ToolCallInput {
  readonly tool: string;
  readonly arguments: string;
}

/** A call as the learning code sees it: its arguments parsed, and their shape (docs/learning.md#patterns). */
export interface ParsedCall {
  readonly tool: string;
  readonly args: unknown;
  readonly shape: string;
}

/** Calls parsed between two yields to the event loop (each at most 64 KiB, the session at most its byte limit). */
const PARSE_SLICE = 500;

/**
 * Checks and parses a session; `INVALID_ARGUMENT` naming the field and the limit for anything over a
 * limit (checked before any parsing, so an oversized session costs one pass over its lengths).
 */
export async function parseSession(
  sessionKey: string,
  calls: readonly ToolCallInput[],
  limits: SessionSizeLimits,
  slicing: Slicing = {},
): Promise<ParsedCall[]> {
  if (sessionKey.trim() === "" || sessionKey.length > SESSION_FIELD_LIMITS.keyChars) {
    throw new InvalidArgumentError("session_key", `is required, at most ${SESSION_FIELD_LIMITS.keyChars} characters`);
  }
  if (calls.length > limits.maxSessionCalls) {
    throw new InvalidArgumentError(
      "tool_calls",
      `has ${calls.length} calls; the session size limit is ${limits.maxSessionCalls} tool calls a session`,
    );
  }
  let bytes = 0;
  for (const call of calls) bytes += Buffer.byteLength(call.tool) + Buffer.byteLength(call.arguments);
  if (bytes > limits.maxSessionBytes) {
    throw new InvalidArgumentError(
      "tool_calls",
      `are ${bytes} bytes of tool names and arguments; the session size limit is ${limits.maxSessionBytes} bytes a session`,
    );
  }
  return mapInSlices(calls, PARSE_SLICE, parseCall, slicing);
}

function parseCall(call: ToolCallInput, index: number): ParsedCall {
  const tool = call.tool.trim();
  if (tool === "" || tool.length > SESSION_FIELD_LIMITS.toolChars) {
    throw new InvalidArgumentError(`tool_calls[${index}].tool`, `is required, at most ${SESSION_FIELD_LIMITS.toolChars} characters`);
  }
  if (call.arguments.length > SESSION_FIELD_LIMITS.argumentChars) {
    throw new InvalidArgumentError(`tool_calls[${index}].arguments`, `is longer than ${SESSION_FIELD_LIMITS.argumentChars} characters`);
  }
  // Before parsing: the shape, implicit-outcome and example-argument walks recurse, so the nesting
  // they ever see is bounded here, by a scan that does not recurse itself.
  const depth = jsonNesting(call.arguments, SESSION_FIELD_LIMITS.argumentDepth);
  if (depth > SESSION_FIELD_LIMITS.argumentDepth) {
    throw new InvalidArgumentError(
      `tool_calls[${index}].arguments`,
      `nests objects and arrays more than ${SESSION_FIELD_LIMITS.argumentDepth} levels deep; the argument depth limit is ${SESSION_FIELD_LIMITS.argumentDepth} levels`,
    );
  }
  let args: unknown = {};
  if (call.arguments.trim() !== "") {
    try {
      args = JSON.parse(call.arguments) as unknown;
    } catch (error) {
      throw new InvalidArgumentError(`tool_calls[${index}].arguments`, `is not JSON: ${errorMessage(error)}`);
    }
  }
  return { tool, args, shape: shapeOf(args) };
}

/**
 * The deepest nesting of objects and arrays in JSON text (0 for a scalar), by one pass over its
 * characters with a counter, never recursion; brackets inside strings do not count. Stops as soon as
 * it passes `stopAbove`, returning that depth. Text that is not JSON gets a number too (its parse
 * fails afterwards).
 */
export function jsonNesting(text: string, stopAbove = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > stopAbove) return deepest;
      }
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
    }
  }
  return deepest;
}
