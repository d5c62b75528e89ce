import { InvalidArgumentError } from "../../errors/index.js";
import type { Caller } from "../../identity/index.js";
import type { CompositionCore } from "./composition-core.js";
import { compileCondition } from "./condition.js";
import { type CompositionDefinition, formatSkillRef, isRecord, parseSkillRef } from "./definition.js";
import type { SkillKind } from "./dependency-store.js";
import { CycleError, loadOrder, nestingDepth } from "./graph.js";
import { referencesOf, TemplateError } from "./template.js";

/** The module file a dependency becomes; `skill.py` is the skill itself. */
const RESERVED_MODULE = "skill";

/**
 * Pre-flight of a composed definition (docs/composition.md#pre-flight): step skills exist, are
 * visible and live; templates read only parameters and earlier steps; conditions parse; no
 * cycle; nesting within the limit. Returns the step references to record as its dependencies.
 */
export function preflightComposed(
  core: CompositionCore,
  name: string,
  definition: CompositionDefinition,
  parametersSchema: string,
  caller: Caller,
): string[] {
  const properties = declaredProperties(parametersSchema);
  const earlier = new Set<string>();
  definition.steps.forEach((step, index) => {
    const field = `steps[${index}]`;
    core.resolve(step.skill, caller, `${field} (${step.id})`);
    if (step.when !== "") compileCondition(step.when, earlier, `${field}.when`);
    checkReferences(step.args, earlier, properties, `${field}.args`);
    earlier.add(step.id);
  });
  if (definition.output !== undefined) checkReferences(definition.output, earlier, properties, "output");
  const dependsOn = [...new Set(definition.steps.map((step) => formatSkillRef(step.skill)))];
  checkGraph(core, name, dependsOn, "composed", "steps");
  return dependsOn;
}

/**
 * Pre-flight of a plain skill's `depends_on`: each a visible, live, plain skill other than
 * itself, no cycle. Returns the normalized references.
 */
export function preflightPlain(core: CompositionCore, name: string, dependsOn: readonly string[], caller: Caller): string[] {
  const refs = dependsOn.map((text, index) => parseSkillRef(text.trim(), `depends_on[${index}]`));
  const seen = new Set<string>();
  refs.forEach((ref, index) => {
    const field = `depends_on[${index}]`;
    if (ref.name === RESERVED_MODULE)
      throw new InvalidArgumentError(field, `"${RESERVED_MODULE}" cannot be a dependency: its module name is the skill's own file`);
    if (seen.has(ref.name)) throw new InvalidArgumentError(field, `"${ref.name}" is listed twice`);
    seen.add(ref.name);
    const resolved = core.resolve(ref, caller, `${field}`);
    if (resolved.declared.kind === "composed") {
      throw new InvalidArgumentError(field, `"${ref.name}" is a composed skill; a plain skill can only import plain skills`);
    }
  });
  const normalized = refs.map(formatSkillRef);
  if (normalized.length > 0) checkGraph(core, name, normalized, "plain", "depends_on");
  return normalized;
}

/** The graph with `name`'s next version declaring `direct`: INVALID_ARGUMENT naming a cycle or a nesting too deep. */
function checkGraph(core: CompositionCore, name: string, direct: readonly string[], kind: SkillKind, field: string): void {
  const edges = (key: string): readonly string[] => (key === name ? direct : core.edgesOf(key));
  try {
    loadOrder(name, edges);
  } catch (error) {
    if (error instanceof CycleError) throw new InvalidArgumentError(field, `would close a dependency cycle: ${error.cycle.join(" → ")}`);
    throw error;
  }
  if (kind !== "composed") return;
  const depth = nestingDepth(name, edges, (key) => (key === name ? true : core.kindOfKey(key) === "composed"));
  if (depth > core.settings.maxDepth) {
    throw new InvalidArgumentError(
      field,
      `nests composed skills ${depth} deep; the limit is ${core.settings.maxDepth} (SKILL_ENGINE_COMPOSITION_MAX_DEPTH)`,
    );
  }
}

/** Top-level property names a parameters schema declares; undefined when it does not restrict them. */
function declaredProperties(parametersSchema: string): ReadonlySet<string> | undefined {
  let schema: unknown;
  try {
    schema = JSON.parse(parametersSchema);
  } catch {
    return undefined;
  }
  if (!isRecord(schema) || !isRecord(schema.properties)) return undefined;
  return new Set(Object.keys(schema.properties));
}

function checkReferences(
  template: unknown,
  earlier: ReadonlySet<string>,
  properties: ReadonlySet<string> | undefined,
  field: string,
): void {
  try {
    for (const reference of referencesOf(template)) {
      if (reference.root === "steps" && !earlier.has(reference.step)) {
        throw new InvalidArgumentError(field, `{{${reference.text}}} reads step "${reference.step}", which is not an earlier step`);
      }
      const first = reference.path[0];
      if (reference.root === "params" && properties && typeof first === "string" && !properties.has(first)) {
        throw new InvalidArgumentError(field, `{{${reference.text}}} reads params.${first}, which parameters_schema does not declare`);
      }
    }
  } catch (error) {
    if (error instanceof TemplateError) throw new InvalidArgumentError(field, error.message);
    throw error;
  }
}
