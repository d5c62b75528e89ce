/**
 * What an LLM is handed for a routed skill (docs/routing.md#what-an-llm-is-handed).
 *
 * A skill with code is a tool; its description carries a hardening that tells the model to call it
 * by name instead of writing a wrapper script around it (seed 000's loop: a model saw the skill in
 * its tool list and kept executing scripts). How much of it: `short` (the default) adds one line;
 * `full` is seed 000's three lines (a label, a concrete call with the skill's own name and schema,
 * and the wrap patterns that do not work); `none` leaves the description as registered.
 *
 * An instructions-only skill has nothing to call, so it is never a tool: it is a text to read,
 * whose body GetSkillContent discloses.
 */
export type Hardening = "short" | "full" | "none";

/** RouteSkills' hardening when the request sets none. */
export const DEFAULT_HARDENING: Hardening = "short";

export const ACQUIRED_SKILL_LABEL = "[ACQUIRED SKILL — CALL BY NAME]";

/** The one line `short` adds: what the three lines of `full` say, without naming any path. */
export const SHORT_HARDENING_LINE = "Call it directly as a tool; never wrap it in a script.";

/** A tool's description at a hardening level. */
export function toolDescription(name: string, description: string, parametersSchema: string, hardening: Hardening): string {
  switch (hardening) {
    case "none":
      return description.trim();
    case "full":
      return hardenedDescription(name, description, parametersSchema);
    case "short":
      return `${description.trim()}\n${SHORT_HARDENING_LINE}`;
  }
}

/** Seed 000's hardening: the label, a call with the skill's own name and schema, the wraps that do not work. */
export function hardenedDescription(name: string, description: string, parametersSchema: string): string {
  const example = JSON.stringify(exampleArguments(parametersSchema));
  return [
    `${ACQUIRED_SKILL_LABEL} ${description.trim()}`,
    `Call it directly as the tool "${name}", e.g. ${name}(${example}).`,
    `Do not wrap it: no \`python -c\`, no \`import ${name}\`, no \`python3 acquired_skills/${name}.py\`.`,
  ].join("\n");
}

/**
 * An instructions-only skill as a text for the model's context (its system prompt), never a tool:
 * what it is for, and the call that discloses its body.
 */
export function instructionsText(name: string, description: string): string {
  return `${description.trim()}\nInstructions to read, not a tool to call: their body comes from GetSkillContent {"name":${JSON.stringify(name)}}.`;
}

/** Example arguments from a JSON Schema: examples/defaults/enums first, then a value per type. */
export function exampleArguments(parametersSchema: string): Record<string, unknown> {
  let schema: unknown;
  try {
    schema = JSON.parse(parametersSchema);
  } catch {
    return {};
  }
  const properties = (schema as { properties?: Record<string, unknown> } | null)?.properties;
  if (!properties || typeof properties !== "object") return {};
  const required = new Set(((schema as { required?: unknown }).required as string[] | undefined) ?? []);
  const names = Object.keys(properties);
  const chosen = required.size > 0 ? names.filter((n) => required.has(n)) : names.slice(0, 3);
  return Object.fromEntries(chosen.map((n) => [n, exampleValue(properties[n], n, 0)]));
}

function exampleValue(schema: unknown, name: string, depth: number): unknown {
  const s = (schema ?? {}) as Record<string, unknown>;
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0] as unknown;
  if ("default" in s) return s.default;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  const type: unknown = Array.isArray(s.type) ? (s.type[0] as unknown) : s.type;
  switch (type) {
    case "integer":
      return 1;
    case "number":
      return 1.5;
    case "boolean":
      return true;
    case "array":
      return depth < 2 ? [exampleValue(s.items, name, depth + 1)] : [];
    case "object": {
      const inner = s.properties as Record<string, unknown> | undefined;
      if (!inner || depth >= 2) return {};
      return Object.fromEntries(
        Object.keys(inner)
          .slice(0, 3)
          .map((k) => [k, exampleValue(inner[k], k, depth + 1)]),
      );
    }
    default:
      return `<${name}>`;
  }
}

/** The tool definition in an LLM API's shape, as a plain object. */
export function toolDefinition(format: "openai" | "anthropic", name: string, description: string, parametersSchema: string): unknown {
  let parameters: unknown = { type: "object" };
  try {
    parameters = JSON.parse(parametersSchema);
  } catch {
    // The registry validated it; keep a usable definition regardless.
  }
  return format === "anthropic"
    ? { name, description, input_schema: parameters }
    : { type: "function", function: { name, description, parameters } };
}
