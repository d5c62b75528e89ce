/**
 * Tool-description hardening (docs/routing.md#hardened-descriptions): the description an LLM sees says plainly that the skill
 * is a top-level tool called by name, shows a concrete call with the skill's own name and schema,
 * and lists the wrap patterns that do not work. (It closed a loop where a model saw the skill in
 * its tool list and kept writing wrapper scripts instead of calling it.)
 */
export const ACQUIRED_SKILL_LABEL = "[ACQUIRED SKILL — CALL BY NAME]";

export function hardenedDescription(name: string, description: string, parametersSchema: string): string {
  const example = JSON.stringify(exampleArguments(parametersSchema));
  return [
    `${ACQUIRED_SKILL_LABEL} ${description.trim()}`,
    `Call it directly as the tool "${name}", e.g. ${name}(${example}).`,
    `Do not wrap it: no \`python -c\`, no \`import ${name}\`, no \`python3 acquired_skills/${name}.py\`.`,
  ].join("\n");
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
