import type { CallContext, SkillRecord } from "../control/index.js";
import type { SequenceStep } from "./sequence.js";

/**
 * What promotion registers when a candidate's sequence holds tools that are not invocable skills
 * (docs/learning.md#promotion): an instructions-only skill, like a folder's, whose body is the
 * mechanical description seed 004 gives a first version: the steps in order, each tool and the shape
 * of its arguments (keys and JSON types only; values were never recorded).
 */
export interface InstructionsSkill {
  readonly name: string;
  readonly description: string;
  /** The SKILL.md text: frontmatter (name, description) and the steps. */
  readonly skillMd: string;
}

/** Registers (or adds a version to) an instructions-only skill owned by the caller; the skill sources implement it. */
export interface InstructionsRegistrar {
  register(skill: InstructionsSkill, context: CallContext): Promise<SkillRecord>;
  /** Whether `name` is an instructions-only skill (an evolution keeps a skill's kind). */
  isInstructions(name: string): boolean;
}

/** The SKILL.md of a promoted routine; `skills` says which of its tools are skills of this service. */
export function instructionsSkillMd(
  input: { name: string; description: string; sequence: readonly SequenceStep[]; occurrences: number },
  skills: ReadonlySet<string>,
): string {
  const steps = input.sequence.map((step, i) => {
    const kind = skills.has(step.tool) ? "a skill of this service: call it by name" : "one of your own tools";
    return `${i + 1}. \`${step.tool}\` (${kind}) with arguments shaped \`${step.shape}\``;
  });
  return [
    "---",
    // JSON strings are YAML double-quoted scalars: any name or description stays one value.
    `name: ${JSON.stringify(input.name)}`,
    `description: ${JSON.stringify(input.description)}`,
    "---",
    `# ${input.name}`,
    "",
    `A routine observed in ${input.occurrences} sessions: ${input.sequence.length} tool calls, in this order.`,
    "Only the shape of each call's arguments was recorded (keys and JSON types), never their values:",
    "fill them in from the task at hand.",
    "",
    ...steps,
    "",
  ].join("\n");
}
