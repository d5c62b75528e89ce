/**
 * Parameter templates (docs/composition.md#templates): any JSON value whose strings may hold
 * `{{reference}}` placeholders. A string that is exactly one placeholder becomes the referenced
 * value with its JSON type; a placeholder inside a longer string is replaced by the value's text
 * (strings as they are, anything else as JSON). A reference that names a missing value is an error,
 * never an empty string.
 *
 * reference := "params" accessor*
 *            | "steps." step-id "." ("output" accessor* | "files" accessor* | "stdout" | "stderr" | "exit_code" | "success")
 * accessor  := "." key | "[" index "]"        key := [A-Za-z_][A-Za-z0-9_-]*   index := [0-9]+
 */
import { COMPOSITION_LIMITS, isRecord, jsonDepth, tooDeep } from "./definition.js";

const PLACEHOLDER = /\{\{([^{}]*)\}\}/g;
const WHOLE_PLACEHOLDER = /^\{\{([^{}]*)\}\}$/;
const ACCESSOR = /^(?:\.([A-Za-z_][A-Za-z0-9_-]*)|\[(\d{1,9})\])/;
export type StepField = "output" | "files" | "stdout" | "stderr" | "exit_code" | "success";

export type Reference =
  | { readonly text: string; readonly root: "params"; readonly path: readonly (string | number)[] }
  | {
      readonly text: string;
      readonly root: "steps";
      readonly step: string;
      readonly field: StepField;
      readonly path: readonly (string | number)[];
    };

/** A placeholder that does not parse, or names a value that is missing. */
export class TemplateError extends Error {
  constructor(
    readonly reference: string,
    reason: string,
  ) {
    super(`{{${reference}}}: ${reason}`);
    this.name = "TemplateError";
  }
}

/** What a later step can read of an earlier one. */
export interface StepValues {
  /** stdout parsed as JSON; undefined when it is not JSON. */
  readonly output: unknown;
  readonly stdout: string;
  readonly stderr: string;
  readonly exit_code: number;
  readonly success: boolean;
  /** The paths of the files the step left under /sandbox/out/ (docs/composition.md#files). */
  readonly files: readonly string[];
}

/** The values templates and conditions read. */
export interface TemplateScope {
  readonly params: unknown;
  readonly steps: Readonly<Record<string, StepValues>>;
}

export function parseReference(raw: string): Reference {
  const text = raw.trim();
  const head = /^(params|steps)/.exec(text);
  if (!head) throw new TemplateError(text, 'a reference starts with "params" or "steps.<id>"');
  let rest = text.slice(head[0].length);
  if (head[1] === "params") return { text, root: "params", path: accessors(text, rest) };
  const step = /^\.([A-Za-z_][A-Za-z0-9_]{0,63})\.(output|files|stdout|stderr|exit_code|success)/.exec(rest);
  if (!step) throw new TemplateError(text, `write steps.<id>.output, .files, .stdout, .stderr, .exit_code or .success`);
  rest = rest.slice(step[0].length);
  const field = step[2] as StepField;
  const path = accessors(text, rest);
  if (field !== "output" && field !== "files" && path.length > 0)
    throw new TemplateError(text, `steps.<id>.${field} has no fields; use steps.<id>.output`);
  return { text, root: "steps", step: step[1] as string, field, path };
}

function accessors(text: string, rest: string): (string | number)[] {
  const path: (string | number)[] = [];
  let remaining = rest;
  while (remaining !== "") {
    const match = ACCESSOR.exec(remaining);
    if (!match) throw new TemplateError(text, `cannot read "${remaining}": use .key or [index]`);
    path.push(match[1] !== undefined ? match[1] : Number(match[2]));
    remaining = remaining.slice(match[0].length);
  }
  return path;
}

/** Every reference in a template (strings at any depth; object keys are not templated). */
export function referencesOf(template: unknown): Reference[] {
  const found: Reference[] = [];
  walkStrings(template, (text) => {
    for (const match of text.matchAll(PLACEHOLDER)) found.push(parseReference(match[1] as string));
  });
  return found;
}

function walkStrings(value: unknown, visit: (text: string) => void): void {
  if (typeof value === "string") visit(value);
  else if (Array.isArray(value)) for (const item of value) walkStrings(item, visit);
  else if (isRecord(value)) for (const item of Object.values(value)) walkStrings(item, visit);
}

/** The template with every placeholder replaced; TemplateError names the first missing value. */
export function renderTemplate(template: unknown, scope: TemplateScope): unknown {
  if (typeof template === "string") {
    const whole = WHOLE_PLACEHOLDER.exec(template);
    if (whole) return lookup(parseReference(whole[1] as string), scope);
    return template.replace(PLACEHOLDER, (_match, raw: string) => {
      const value = lookup(parseReference(raw), scope);
      return typeof value === "string" ? value : JSON.stringify(value);
    });
  }
  if (Array.isArray(template)) return template.map((item) => renderTemplate(item, scope));
  if (isRecord(template)) {
    return Object.fromEntries(Object.entries(template).map(([key, item]) => [key, renderTemplate(item, scope)]));
  }
  return template;
}

/** The value a reference names; TemplateError when any part of it is missing. */
export function lookup(reference: Reference, scope: TemplateScope): unknown {
  let value: unknown;
  let where: string;
  if (reference.root === "params") {
    value = scope.params;
    where = "params";
  } else {
    const step = scope.steps[reference.step];
    if (!step) throw new TemplateError(reference.text, `step "${reference.step}" did not run (skipped, failed before running, or later)`);
    value = step[reference.field];
    where = `steps.${reference.step}.${reference.field}`;
    if (reference.field === "output" && value === undefined) {
      const why = parseJson(step.stdout) === undefined ? "is not JSON" : tooDeep();
      throw new TemplateError(reference.text, `the stdout of step "${reference.step}" ${why}`);
    }
  }
  for (const key of reference.path) {
    const next =
      typeof key === "number" ? (Array.isArray(value) ? (value[key] as unknown) : undefined) : isRecord(value) ? value[key] : undefined;
    const shown = typeof key === "number" ? `[${key}]` : `.${key}`;
    if (next === undefined) {
      throw new TemplateError(reference.text, `${where} has no ${typeof key === "number" ? `item ${key}` : `field "${key}"`}`);
    }
    value = next;
    where += shown;
  }
  return value;
}

/**
 * stdout as JSON when it is JSON (after trimming) that nests within COMPOSITION_LIMITS.jsonDepth,
 * else undefined: templates and conditions read nothing deeper (docs/composition.md#templates).
 */
export function parseOutput(stdout: string): unknown {
  const value = parseJson(stdout);
  return jsonDepth(value) > COMPOSITION_LIMITS.jsonDepth ? undefined : value;
}

function parseJson(stdout: string): unknown {
  const text = stdout.trim();
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
