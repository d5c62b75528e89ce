import { parseArgs } from "node:util";

export const DEFAULT_ADDRESS = "127.0.0.1:50051";
export const DEFAULT_TIMEOUT_SECONDS = 60;

/** A mistake in the command line: printed with the usage hint, exit code 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
    this.name = "UsageError";
  }
}

/** Every option any command accepts; each command lists which ones it allows. */
const OPTIONS = {
  address: { type: "string" },
  json: { type: "boolean" },
  timeout: { type: "string" },
  help: { type: "boolean", short: "h" },
  name: { type: "string" },
  description: { type: "string" },
  schema: { type: "string" },
  "schema-json": { type: "string" },
  "test-payload": { type: "string" },
  example: { type: "string", multiple: true },
  all: { type: "boolean" },
  limit: { type: "string" },
  format: { type: "string" },
  "dry-run": { type: "boolean" },
  junit: { type: "string" },
} as const;

type OptionName = keyof typeof OPTIONS;
const GLOBAL: readonly OptionName[] = ["address", "json", "timeout", "help"];

interface CommandSpec {
  /** Positional arguments: min and max (Infinity for "any number"). */
  positionals: [number, number];
  options: readonly OptionName[];
  usage: string;
}

export const COMMANDS: Record<string, CommandSpec> = {
  register: {
    positionals: [1, 1],
    options: ["name", "description", "schema", "schema-json", "test-payload", "example"],
    usage:
      "register <file.py> --name N --description D [--schema file.json | --schema-json '{...}'] [--test-payload '{...}'] [--example QUERY]...\n" +
      "      Registers (or re-registers as a new version) the skill in <file.py>; the service test-runs it first.\n" +
      '      Schema defaults to {"type":"object"}, test payload to {}. Prints the version, normalizations and warnings.',
  },
  invoke: {
    positionals: [1, 2],
    options: [],
    usage:
      "invoke <name> [payload-json]\n" +
      "      Runs the active version (payload defaults to {}). Prints the skill's stdout (--json: the whole result).\n" +
      "      Exit code 0 when the skill succeeded, 1 when it failed.",
  },
  list: { positionals: [0, 0], options: ["all"], usage: "list [--all]\n      Every skill (--all: retired and deleted ones too)." },
  show: { positionals: [1, 1], options: [], usage: "show <name>\n      Metadata, versions and the active code of one skill." },
  route: {
    positionals: [1, Infinity],
    options: ["limit", "format"],
    usage:
      "route <query...> [--limit n] [--format openai|anthropic]\n" +
      "      The skills routing picks for a query; with --format, also their tool definitions in that format.",
  },
  retire: {
    positionals: [0, 0],
    options: ["dry-run"],
    usage: "retire [--dry-run]\n      Retires every degraded skill matching the retirement rule (--dry-run: only report).",
  },
  restore: { positionals: [1, 1], options: [], usage: "restore <name>\n      Brings a retired or deleted skill back." },
  rollback: { positionals: [2, 2], options: [], usage: "rollback <name> <version>\n      Makes an earlier version active again." },
  delete: { positionals: [1, 1], options: [], usage: "delete <name>\n      Soft delete (restorable with `restore`)." },
  "wipe-sandbox": { positionals: [0, 0], options: [], usage: "wipe-sandbox\n      Removes every run directory; loses no skill, cuts off runs in flight." },
  test: {
    positionals: [0, Infinity],
    options: ["junit"],
    usage:
      "test [names...] [--junit file.xml]\n" +
      "      Re-runs the stored test payload of every listed (not retired or deleted) skill, or of the named ones,\n" +
      "      through InvokeSkill: each run counts as an invocation in the skill's telemetry and health.\n" +
      "      Reports pass/fail with the one-line cause and 'N passed, M failed'; exit code 1 on any failure.\n" +
      "      --junit writes a JUnit XML report for CI.",
  },
};

export function usage(command?: string): string {
  const global =
    "Global options:\n" +
    `  --address HOST:PORT  the service (default $SKILLCTL_ADDRESS or ${DEFAULT_ADDRESS})\n` +
    "  --json               machine-readable output on stdout\n" +
    `  --timeout SECONDS    deadline of each call (default ${DEFAULT_TIMEOUT_SECONDS})\n` +
    "  -h, --help           this help\n\n" +
    "Exit codes: 0 success; 1 a skill (or a skill test) failed; 2 usage or gRPC error (`skillctl: CODE: details`).\n";
  const spec = command === undefined ? undefined : COMMANDS[command];
  if (spec !== undefined) return `usage: skillctl ${spec.usage}\n\n${global}`;
  const all = Object.values(COMMANDS)
    .map((c) => `  ${c.usage}`)
    .join("\n");
  return `usage: skillctl [global options] <command> [arguments]\n\nCommands:\n${all}\n\n${global}`;
}

export interface GlobalOptions {
  address: string;
  json: boolean;
  timeoutMs: number;
}

export type ParsedArgs =
  | { kind: "help"; command?: string }
  | {
      kind: "command";
      command: string;
      positionals: string[];
      options: Partial<Record<OptionName, string | boolean | string[]>>;
      global: GlobalOptions;
    };

export function parseCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv): ParsedArgs {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const [command, ...positionals] = parsed.positionals;
  const values = parsed.values as Partial<Record<OptionName, string | boolean | string[]>>;
  if (command === undefined || command === "help") {
    if (values.help || command === "help") return { kind: "help", command: positionals[0] };
    throw new UsageError("missing command");
  }
  const spec = COMMANDS[command];
  if (spec === undefined) throw new UsageError(`unknown command '${command}'`);
  if (values.help) return { kind: "help", command };

  for (const key of Object.keys(values) as OptionName[]) {
    if (!GLOBAL.includes(key) && !spec.options.includes(key)) throw new UsageError(`'${command}' does not take --${key}`, command);
  }
  const [min, max] = spec.positionals;
  if (positionals.length < min) throw new UsageError(`'${command}' needs more arguments`, command);
  if (positionals.length > max) throw new UsageError(`'${command}' takes at most ${max} argument(s), got ${positionals.length}`, command);

  const timeoutText = values.timeout as string | undefined;
  const timeoutSeconds = timeoutText === undefined ? DEFAULT_TIMEOUT_SECONDS : Number(timeoutText);
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) throw new UsageError(`--timeout must be a positive number of seconds, got '${timeoutText}'`);
  const address = (values.address as string | undefined) ?? (env.SKILLCTL_ADDRESS || DEFAULT_ADDRESS);
  if (address.trim() === "") throw new UsageError("--address must not be empty");

  return {
    kind: "command",
    command,
    positionals,
    options: values,
    global: { address, json: values.json === true, timeoutMs: Math.round(timeoutSeconds * 1000) },
  };
}

/** A positive integer option or argument, or a UsageError naming it. */
export function positiveInteger(text: string, what: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 0xffffffff) throw new UsageError(`${what} must be a positive integer, got '${text}'`);
  return Number(text);
}

/** Checks that text is JSON (the service would say so too, but later and less precisely). */
export function jsonText(text: string, what: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${what} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  return text;
}
