import { Ajv, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { InvalidArgumentError } from "../../errors/index.js";
import { errorMessage } from "../../errors/index.js";
import { jsonDepth } from "../../json/index.js";

/** Usable as a tool name by every major LLM API, and safe as a file name. */
export const SKILL_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

/**
 * Input bounds. Payloads reach the container on stdin and the skill as sys.argv[1]; their bound
 * dates from when they were a command-line argument and clients rely on it.
 */
export const LIMITS = {
  codeBytes: 100 * 1024,
  descriptionChars: 1024,
  schemaBytes: 64 * 1024,
  payloadBytes: 64 * 1024,
  /**
   * Levels of arrays and objects inside each other in a payload or a schema: the schema validator
   * walks a value by recursion, and a few kilobytes of brackets would overflow its stack.
   */
  jsonDepth: 128,
} as const;

export interface RegistrationInput {
  readonly name: string;
  readonly description: string;
  readonly parametersSchema: string;
  readonly code: string;
  readonly testPayload: string;
}

/** A registration whose fields passed every check; the schema is compiled and ready. */
export interface ValidRegistration extends RegistrationInput {
  readonly validatePayload: PayloadValidator;
  /** What was done to the fields on the way in (an empty schema read as a parameterless object). */
  readonly normalizations: readonly string[];
}

/** What an empty `parameters_schema` stands for: a tool without parameters. */
export const PARAMETERLESS_SCHEMA = '{"type":"object"}';

/**
 * `{}` and an empty string are what people send for a tool without parameters: read as
 * `{"type":"object"}`, saying so (docs/skill-lifecycle.md#input-limits). Anything else is kept.
 */
function normalizeParametersSchema(schemaText: string): { schema: string; note?: string } {
  const trimmed = schemaText.trim();
  let empty = trimmed === "";
  if (!empty && trimmed.startsWith("{")) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      empty = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) && Object.keys(parsed).length === 0;
    } catch {
      // Not JSON: compileParametersSchema says so.
    }
  }
  if (!empty) return { schema: schemaText };
  return {
    schema: PARAMETERLESS_SCHEMA,
    note: `read parameters_schema ${trimmed === "" ? "(empty)" : JSON.stringify(trimmed)} as ${PARAMETERLESS_SCHEMA}: a tool without parameters`,
  };
}

export type PayloadValidator = (field: string, payloadText: string) => string;

// Untrusted schemas: no remote refs are ever loaded (no loadSchema), unknown keywords are
// tolerated because LLM tool schemas often carry extras such as "examples".
// This instance only checks schemas against the meta-schema, which adds nothing to its caches.
const schemaChecker = new Ajv({ strict: false, allErrors: true });
/**
 * A schema that names JSON Schema 2020-12 as its `$schema` is read in that dialect: MCP clients send it (2020-12 is
 * MCP's default for tool schemas, and zod's JSON Schema output names it), and draft-07's checker knows no such
 * meta-schema (docs/skill-lifecycle.md#registration).
 */
const DRAFT_2020_12 = /^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/;
const schemaChecker2020 = new Ajv2020({ strict: false, allErrors: true });

/** Compiled validators kept (a few KB each): a bound, so the cache cannot grow with the library. */
const COMPILED_SCHEMAS_KEPT = 256;
const compiledSchemas = new Map<string, ValidateFunction>();

/**
 * Compiles one schema with an Ajv instance of its own. An instance keeps every schema it compiled
 * (by object identity and by `$id`) and every compiled function keeps its instance's values, so a
 * shared instance grew by a few KB per registration for the service's lifetime (the soak's RSS
 * creep) and refused a second schema with the same `$id`. Now a validator holds only itself; the
 * fresh instance costs about 0.4 ms per compile, which the last {@link COMPILED_SCHEMAS_KEPT}
 * schemas (by their text) are spared: a skill's next version, its patches and its invocations
 * usually bring the same schema again.
 */
function compileValidator(schemaText: string, schema: object): ValidateFunction {
  const kept = compiledSchemas.get(schemaText);
  if (kept) {
    // Most recently used last: a Map iterates in insertion order, so the oldest is evicted first.
    compiledSchemas.delete(schemaText);
    compiledSchemas.set(schemaText, kept);
    return kept;
  }
  const is2020 = DRAFT_2020_12.test(String((schema as { $schema?: unknown }).$schema ?? ""));
  const checker = is2020 ? schemaChecker2020 : schemaChecker;
  if (!checker.validateSchema(schema)) throw new Error(`schema is invalid: ${checker.errorsText(checker.errors)}`);
  const options = { strict: false, allErrors: true, validateSchema: false, meta: false } as const;
  // meta: false loads no meta-schema, so a `$schema` naming one cannot be resolved: it is left out (the instance is the dialect).
  const { $schema: _dialect, ...rest } = schema as Record<string, unknown>;
  const validate = is2020 ? new Ajv2020(options).compile(rest) : new Ajv(options).compile(schema);
  compiledSchemas.set(schemaText, validate);
  if (compiledSchemas.size > COMPILED_SCHEMAS_KEPT) compiledSchemas.delete(compiledSchemas.keys().next().value as string);
  return validate;
}

export function validateSkillName(name: string, field = "name"): string {
  if (name === "") throw new InvalidArgumentError(field, "is required");
  if (!SKILL_NAME_PATTERN.test(name)) {
    throw new InvalidArgumentError(
      field,
      `${JSON.stringify(name.slice(0, 80))} is not a valid skill name: use 1-64 letters, digits, '_' or '-', starting with a letter or '_'`,
    );
  }
  return name;
}

/** Checks every field of a registration, naming the first bad field and why. */
export function validateRegistration(input: RegistrationInput): ValidRegistration {
  validateSkillName(input.name);
  const description = input.description.trim();
  if (description === "") throw new InvalidArgumentError("description", "is required: say what the skill does and when to use it");
  if (input.description.length > LIMITS.descriptionChars) {
    throw new InvalidArgumentError("description", `is ${input.description.length} characters; the limit is ${LIMITS.descriptionChars}`);
  }
  if (input.code.trim() === "") throw new InvalidArgumentError("code", "is required: the Python source of the skill");
  if (input.code.includes("\0")) throw new InvalidArgumentError("code", "contains a NUL byte; Python source cannot");
  const codeBytes = Buffer.byteLength(input.code, "utf8");
  if (codeBytes > LIMITS.codeBytes) {
    throw new InvalidArgumentError("code", `is ${codeBytes} bytes; the limit is ${LIMITS.codeBytes}`);
  }
  const { schema, note } = normalizeParametersSchema(input.parametersSchema);
  const validatePayload = compileParametersSchema(schema);
  validatePayload("test_payload", input.testPayload);
  return { ...input, parametersSchema: schema, validatePayload, normalizations: note ? [note] : [] };
}

/** Parses and compiles a parameters schema; the result validates payload text against it. */
export function compileParametersSchema(schemaText: string, field = "parameters_schema"): PayloadValidator {
  if (schemaText.trim() === "") {
    throw new InvalidArgumentError(field, 'is required: a JSON Schema such as {"type":"object","properties":{}}');
  }
  const schemaBytes = Buffer.byteLength(schemaText, "utf8");
  if (schemaBytes > LIMITS.schemaBytes) {
    throw new InvalidArgumentError(field, `is ${schemaBytes} bytes; the limit is ${LIMITS.schemaBytes}`);
  }
  const schema = parseJson(field, schemaText);
  refuseTooDeep(field, schema);
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    throw new InvalidArgumentError(field, "must be a JSON object (a JSON Schema)");
  }
  if ((schema as Record<string, unknown>).type !== "object") {
    throw new InvalidArgumentError(field, 'must describe an object ("type": "object"), as LLM tool parameters are');
  }
  let validate: ValidateFunction;
  try {
    validate = compileValidator(schemaText, schema);
  } catch (error) {
    throw new InvalidArgumentError(field, `is not a valid JSON Schema: ${errorMessage(error)}`);
  }
  return (payloadField, payloadText) => {
    const text = payloadText.trim() === "" ? "{}" : payloadText;
    const payloadBytes = Buffer.byteLength(text, "utf8");
    if (payloadBytes > LIMITS.payloadBytes) {
      throw new InvalidArgumentError(payloadField, `is ${payloadBytes} bytes; the limit is ${LIMITS.payloadBytes}`);
    }
    const payload = parseJson(payloadField, text);
    refuseTooDeep(payloadField, payload);
    if (!validate(payload)) {
      const problems = (validate.errors ?? [])
        .slice(0, 5)
        .map((e) => `${e.instancePath || "(root)"} ${e.message ?? "is invalid"}`)
        .join("; ");
      throw new InvalidArgumentError(payloadField, `does not match parameters_schema: ${problems}`);
    }
    return text;
  };
}

function refuseTooDeep(field: string, value: unknown): void {
  if (jsonDepth(value, LIMITS.jsonDepth) > LIMITS.jsonDepth) {
    throw new InvalidArgumentError(
      field,
      `nests arrays and objects more than ${LIMITS.jsonDepth} levels deep; the limit is ${LIMITS.jsonDepth}`,
    );
  }
}

function parseJson(field: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidArgumentError(field, `is not valid JSON: ${errorMessage(error)}`);
  }
}
