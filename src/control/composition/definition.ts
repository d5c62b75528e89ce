import { jsonDepth as depthOf } from "../../json/index.js";
import { InvalidArgumentError } from "../../errors/index.js";
import { SKILL_NAME_PATTERN } from "../intake/index.js";

/** docs/composition.md#definition: what a composition may hold. */
export const COMPOSITION_LIMITS = {
  /** Steps in one composition. */
  steps: 32,
  /** Characters of one `when` condition. */
  conditionChars: 1_000,
  /** Characters of one step's args template, and of the output template (as JSON text). */
  templateChars: 64 * 1024,
  /**
   * Levels of arrays and objects inside each other in any JSON a composition handles: its templates,
   * its payload, a step's rendered payload, a step's output as templates and conditions read it. The
   * values are walked (rendered, serialized, copied to the condition evaluator) by code whose stack
   * a deeper value would overflow.
   */
  jsonDepth: 128,
} as const;

/** How deeply arrays and objects nest in `value`, up to one level past `limit` (src/json). */
export function jsonDepth(value: unknown, limit: number = COMPOSITION_LIMITS.jsonDepth): number {
  return depthOf(value, limit);
}

/** The one-line rule a value too deep breaks (docs/composition.md#definition). */
export function tooDeep(limit: number = COMPOSITION_LIMITS.jsonDepth): string {
  return `nests arrays and objects more than ${limit} levels deep; JSON in a composition nests at most ${limit} levels`;
}

/** A step id: later steps read its results as `steps.<id>`. */
export const STEP_ID_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export type OnFailure = "stop" | "continue";

/** A reference to a skill: its active version, or a pinned one (`name@version`). */
export interface SkillRef {
  readonly name: string;
  readonly version?: number;
}

export interface ComposedStep {
  readonly id: string;
  readonly skill: SkillRef;
  /** JSON template of the step's payload. */
  readonly args: unknown;
  /** JSONata condition; empty: always run. */
  readonly when: string;
  readonly onFailure: OnFailure;
}

export interface CompositionDefinition {
  readonly steps: readonly ComposedStep[];
  /** JSON template of the composed result; undefined: the last executed step's stdout. */
  readonly output: unknown;
}

/** The marker that tells a composition definition from Python code in the canonical store. */
export const COMPOSITION_KIND = "skill-engine/composed-skill";

/** A step as the wire sends it: templates as JSON text. */
export interface StepInput {
  readonly id: string;
  readonly skill: string;
  readonly args: string;
  readonly when: string;
  readonly onFailure: OnFailure;
}

/** `name` or `name@version` → a reference; INVALID_ARGUMENT otherwise. */
export function parseSkillRef(text: string, field: string): SkillRef {
  const at = text.lastIndexOf("@");
  const name = at < 0 ? text : text.slice(0, at);
  if (!SKILL_NAME_PATTERN.test(name)) {
    throw new InvalidArgumentError(field, `"${text}" is not a skill name (or name@version)`);
  }
  if (at < 0) return { name };
  const versionText = text.slice(at + 1);
  const version = Number(versionText);
  if (!/^[1-9]\d{0,8}$/.test(versionText) || !Number.isSafeInteger(version)) {
    throw new InvalidArgumentError(field, `"${text}": the version after @ must be a number ≥ 1`);
  }
  return { name, version };
}

export function formatSkillRef(ref: SkillRef): string {
  return ref.version === undefined ? ref.name : `${ref.name}@${ref.version}`;
}

/** The definition from the wire's fields, checked for shape (references are checked by the pre-flight). */
export function definitionFromInput(steps: readonly StepInput[], outputText: string): CompositionDefinition {
  if (steps.length === 0) throw new InvalidArgumentError("steps", "a composed skill needs at least one step");
  if (steps.length > COMPOSITION_LIMITS.steps) {
    throw new InvalidArgumentError("steps", `has ${steps.length} steps; the limit is ${COMPOSITION_LIMITS.steps}`);
  }
  const seen = new Set<string>();
  const parsed = steps.map((step, index): ComposedStep => {
    const field = `steps[${index}]`;
    if (!STEP_ID_PATTERN.test(step.id)) {
      throw new InvalidArgumentError(`${field}.id`, `"${step.id}" must match ${STEP_ID_PATTERN.source}`);
    }
    if (seen.has(step.id)) throw new InvalidArgumentError(`${field}.id`, `"${step.id}" is used by an earlier step; ids must be unique`);
    seen.add(step.id);
    if (step.when.length > COMPOSITION_LIMITS.conditionChars) {
      throw new InvalidArgumentError(`${field}.when`, `is longer than ${COMPOSITION_LIMITS.conditionChars} characters`);
    }
    return {
      id: step.id,
      skill: parseSkillRef(step.skill, `${field}.skill`),
      args: templateJson(step.args.trim() === "" ? "{}" : step.args, `${field}.args`),
      when: step.when.trim(),
      onFailure: step.onFailure,
    };
  });
  return { steps: parsed, output: outputText.trim() === "" ? undefined : templateJson(outputText, "output") };
}

function templateJson(text: string, field: string): unknown {
  if (text.length > COMPOSITION_LIMITS.templateChars) {
    throw new InvalidArgumentError(field, `is longer than ${COMPOSITION_LIMITS.templateChars} characters`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    throw new InvalidArgumentError(field, `is not JSON: ${(error as Error).message}`);
  }
  if (jsonDepth(value) > COMPOSITION_LIMITS.jsonDepth) throw new InvalidArgumentError(field, tooDeep());
  return value;
}

/**
 * The definition as the canonical store keeps it (the composed skill's "code"): JSON with a kind
 * marker, so the directory alone tells a composition from Python and rebuilds it.
 */
export function serializeDefinition(definition: CompositionDefinition): string {
  const stored = {
    kind: COMPOSITION_KIND,
    steps: definition.steps.map((step) => ({
      id: step.id,
      skill: formatSkillRef(step.skill),
      args: step.args,
      ...(step.when === "" ? {} : { when: step.when }),
      on_failure: step.onFailure,
    })),
    ...(definition.output === undefined ? {} : { output: definition.output }),
  };
  return `${JSON.stringify(stored, null, 2)}\n`;
}

/** The stored form of a definition (JSON carrying the kind marker), or undefined for anything else (Python code). */
function storedDocument(code: string): Record<string, unknown> | undefined {
  if (!code.trimStart().startsWith("{")) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(code);
  } catch {
    return undefined;
  }
  return isRecord(value) && value.kind === COMPOSITION_KIND ? value : undefined;
}

/** True when a canonical file (or submitted code) is a composition definition rather than Python. */
export function isDefinitionText(code: string): boolean {
  return storedDocument(code) !== undefined;
}

/**
 * The definition a canonical file holds, or undefined when the file is not a composition (Python
 * code). A file with the marker whose content is malformed throws InvalidArgumentError.
 */
export function parseStoredDefinition(code: string): CompositionDefinition | undefined {
  const value = storedDocument(code);
  if (!value) return undefined;
  if (!Array.isArray(value.steps)) throw new InvalidArgumentError("steps", "a stored composition has no steps list");
  // Serialized again below: a hand-edited file nested too deep must fail here, not overflow the stack.
  if (value.output !== undefined && jsonDepth(value.output) > COMPOSITION_LIMITS.jsonDepth)
    throw new InvalidArgumentError("output", tooDeep());
  const steps = value.steps.map((raw: unknown, index: number): StepInput => {
    const step = isRecord(raw) ? raw : {};
    if (jsonDepth(step.args) > COMPOSITION_LIMITS.jsonDepth) throw new InvalidArgumentError(`steps[${index}].args`, tooDeep());
    return {
      id: typeof step.id === "string" ? step.id : `#${index}`,
      skill: typeof step.skill === "string" ? step.skill : "",
      args: JSON.stringify(step.args ?? {}),
      when: typeof step.when === "string" ? step.when : "",
      onFailure: step.on_failure === "continue" ? "continue" : "stop",
    };
  });
  return definitionFromInput(steps, value.output === undefined ? "" : JSON.stringify(value.output));
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
