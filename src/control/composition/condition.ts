/**
 * Step conditions (docs/composition.md#conditions) in JSONata, a maintained expression language
 * with no access to the host: it is interpreted (no eval, no Function), sees only the data it is
 * given ({params, steps}), has no I/O, and is time-boxed, depth-limited and denied regular
 * expressions. This module checks a condition when a composition is registered; evaluation happens
 * in a child process of its own (`condition-host.ts`, docs/composition.md#where-conditions-run).
 */
import jsonata from "jsonata";
import { InvalidArgumentError } from "../../errors/index.js";
import { conditionOptions, jsonataMessage } from "./condition-evaluation.js";
import { parseReference, type TemplateScope } from "./template.js";

export { CONDITION_LIMITS } from "./condition-evaluation.js";

/** A condition that parsed and reads only what it may. */
export interface CompiledCondition {
  readonly text: string;
}

/** A condition failed when evaluated: an error of its step (in-band), never of the call. */
export class ConditionError extends Error {
  constructor(
    readonly condition: string,
    cause: string,
  ) {
    super(`condition ${JSON.stringify(condition)} failed: ${cause}`);
    this.name = "ConditionError";
  }
}

/** Port: evaluates conditions somewhere a runaway cannot hurt the service. */
export interface ConditionEvaluator {
  /**
   * True when the step should run. Throws {@link ConditionError} when the evaluation fails or
   * exceeds its box (docs/composition.md#conditions), RunCancelledError once closed, and
   * UnavailableError when no evaluator can be started.
   */
  evaluate(text: string, scope: TemplateScope): Promise<boolean>;
  /** Stops the evaluator; evaluations still queued reject. Idempotent. */
  close(): Promise<void>;
}

interface AstNode {
  type: string;
  value?: unknown;
  steps?: AstNode[];
  arguments?: AstNode[];
  expressions?: AstNode[];
  lhs?: AstNode | AstNode[] | [AstNode, AstNode][];
  rhs?: AstNode;
  condition?: AstNode;
  then?: AstNode;
  else?: AstNode;
  procedure?: AstNode;
  expression?: AstNode;
}

/**
 * Parses a condition and checks what it reads: top-level paths must start at `params` or at
 * `steps.<id>` of an earlier step (`earlier`). INVALID_ARGUMENT (on `field`) otherwise.
 */
export function compileCondition(text: string, earlier: ReadonlySet<string>, field: string): CompiledCondition {
  try {
    // The bare text first, so parse errors point at the caller's own characters; then as it is
    // evaluated (inside `$boolean(( … ))`), so text that closes the wrapper early is refused too.
    checkPaths(jsonata(text, conditionOptions()).ast() as AstNode, earlier, field);
    jsonata(`$boolean((${text}))`, conditionOptions());
  } catch (error) {
    if (error instanceof InvalidArgumentError) throw error;
    throw new InvalidArgumentError(field, `does not parse: ${jsonataMessage(error)}`);
  }
  return { text };
}

/** Walks the expression (not into predicates or lambdas, whose names are relative) for top-level paths. */
function checkPaths(node: AstNode | undefined, earlier: ReadonlySet<string>, field: string): void {
  if (!node || typeof node !== "object") return;
  if (node.type === "regex" || node.type === "regexp")
    throw new InvalidArgumentError(field, "regular expressions are not available in conditions");
  if (node.type === "path" && node.steps && node.steps.length > 0) {
    const names: string[] = [];
    for (const step of node.steps) {
      if (step.type !== "name" || typeof step.value !== "string") break;
      names.push(step.value);
    }
    if (names.length > 0) checkRoot(names, earlier, field);
    else checkPaths(node.steps[0], earlier, field);
    return;
  }
  if (node.type === "name" && typeof node.value === "string") {
    checkRoot([node.value], earlier, field);
    return;
  }
  if (node.type === "lambda") return;
  const children: (AstNode | undefined)[] = [node.rhs, node.condition, node.then, node.else, node.procedure, node.expression];
  if (Array.isArray(node.lhs)) {
    for (const pair of node.lhs) children.push(...(Array.isArray(pair) ? pair : [pair]));
  } else children.push(node.lhs);
  children.push(...(node.arguments ?? []), ...(node.expressions ?? []));
  for (const child of children) checkPaths(child, earlier, field);
}

function checkRoot(names: string[], earlier: ReadonlySet<string>, field: string): void {
  const [root, step] = names;
  if (root === "params") return;
  if (root !== "steps") {
    throw new InvalidArgumentError(field, `reads "${root}": conditions read only params.* and steps.<id>.*`);
  }
  if (step === undefined) throw new InvalidArgumentError(field, "reads steps without naming a step: write steps.<id>.<field>");
  if (!earlier.has(step)) throw new InvalidArgumentError(field, `reads steps.${step}, which is not an earlier step`);
  // The field after the id must be one templates know too (output, stdout, …).
  if (names.length > 2) {
    try {
      parseReference(names.slice(0, 3).join("."));
    } catch (error) {
      throw new InvalidArgumentError(field, (error as Error).message);
    }
  }
}
