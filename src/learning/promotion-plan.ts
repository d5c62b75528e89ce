/**
 * What a promoted candidate becomes (docs/learning.md#promotion): a composed skill whose steps are
 * the sequence's tools and whose parameters are the sequence's value positions, named from the
 * argument keys. Pure.
 */
import type { SequenceStep } from "./sequence.js";

/** A composed skill's registration input, as RegisterComposedSkill takes it. */
export interface PromotionPlan {
  readonly steps: { id: string; skill: string; args: string; when: string; onFailure: "stop" }[];
  readonly parametersSchema: string;
  readonly testPayload: string;
}

const KEY = /^[A-Za-z_][A-Za-z0-9_-]{0,62}$/;

/**
 * Each top-level argument key of each step becomes a parameter: the key itself when no other step
 * uses it, `<key>_<step number>` otherwise; a key that cannot be a template key, and arguments that
 * are not an object, become `arg<step>_<n>` / `input_<step>`. The test payload is the example
 * session's values, so the composition is proven on what the agent actually ran.
 */
export function promotionPlan(steps: readonly SequenceStep[], exampleArguments: readonly unknown[]): PromotionPlan {
  const keyUses = new Map<string, number>();
  exampleArguments.forEach((args) => {
    if (isObject(args)) for (const key of Object.keys(args)) keyUses.set(key, (keyUses.get(key) ?? 0) + 1);
  });
  const properties: Record<string, { type: string }> = {};
  const payload: Record<string, unknown> = {};
  const planned = steps.map((step, index) => {
    const n = index + 1;
    const args = exampleArguments[index];
    const id = `s${n}_${step.tool.replace(/[^A-Za-z0-9_]/g, "_")}`.slice(0, 64);
    let template: unknown;
    if (isObject(args)) {
      const object: Record<string, string> = {};
      Object.keys(args).forEach((key, position) => {
        const base = KEY.test(key) ? key : `arg${n}_${position + 1}`;
        const param = KEY.test(key) && (keyUses.get(key) ?? 0) <= 1 ? base : `${base}_${n}`;
        properties[param] = { type: jsonType(args[key]) };
        payload[param] = args[key];
        object[key] = `{{params.${param}}}`;
      });
      template = object;
    } else {
      const param = `input_${n}`;
      properties[param] = { type: jsonType(args ?? {}) };
      payload[param] = args ?? {};
      template = `{{params.${param}}}`;
    }
    return { id, skill: step.tool, args: JSON.stringify(template), when: "", onFailure: "stop" as const };
  });
  const schema = { type: "object", properties, required: Object.keys(properties) };
  return { steps: planned, parametersSchema: JSON.stringify(schema), testPayload: JSON.stringify(payload) };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value === "object" ? "object" : typeof value === "number" ? "number" : typeof value;
}
