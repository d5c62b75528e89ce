import { parseArgs } from "node:util";
import { errorMessage } from "../../errors/index.js";

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
  "token-file": { type: "string" },
  tls: { type: "boolean" },
  "tls-ca": { type: "string" },
  public: { type: "boolean" },
  private: { type: "boolean" },
  owner: { type: "string" },
  find: { type: "string" },
  replace: { type: "string" },
  "find-file": { type: "string" },
  "replace-file": { type: "string" },
  "depends-on": { type: "string", multiple: true },
  force: { type: "boolean" },
  trigger: { type: "string" },
  do: { type: "string" },
  avoid: { type: "string" },
  domain: { type: "string", multiple: true },
  confidence: { type: "string" },
  source: { type: "string" },
  "challenge-hash": { type: "string" },
  "challenge-file": { type: "string" },
  scope: { type: "string" },
  original: { type: "string" },
  "with-lesson": { type: "string" },
  "min-retrievals": { type: "string" },
  "max-drop": { type: "string" },
  output: { type: "string", short: "o" },
  system: { type: "boolean" },
  version: { type: "string" },
  "reject-duplicates": { type: "boolean" },
  status: { type: "string" },
  note: { type: "string" },
} as const;

type OptionName = keyof typeof OPTIONS;
const GLOBAL: readonly OptionName[] = ["address", "json", "timeout", "help", "token-file", "tls", "tls-ca"];

interface CommandSpec {
  /** Positional arguments: min and max (Infinity for "any number"). */
  positionals: [number, number];
  options: readonly OptionName[];
  usage: string;
}

export const COMMANDS: Record<string, CommandSpec> = {
  whoami: {
    positionals: [0, 0],
    options: [],
    usage: "whoami\n      The agent the service takes this caller (this token) to be, and whether it is an admin.",
  },
  register: {
    positionals: [1, 1],
    options: [
      "name",
      "description",
      "schema",
      "schema-json",
      "test-payload",
      "example",
      "public",
      "private",
      "depends-on",
      "reject-duplicates",
      "system",
    ],
    usage:
      "register <file.py> --name N --description D [--schema file.json | --schema-json '{...}'] [--test-payload '{...}'] [--example QUERY]... [--public | --private] [--depends-on NAME[@V]]... [--reject-duplicates]\n" +
      "      Similar skills the caller can see are listed; --reject-duplicates refuses a near-duplicate (docs/learning.md#near-duplicates).\n" +
      "      Registers (or re-registers as a new version) the skill in <file.py>; the service test-runs it first.\n" +
      '      Schema defaults to {"type":"object"}, test payload to {}. Prints the version, normalizations and warnings.\n' +
      "      A new skill is private (its owner and admins) unless --public; a new version keeps the visibility\n" +
      "      unless --public or --private is given. --system (admin only): a system skill, visible to every agent\n" +
      "      and changed only by admins.",
  },
  invoke: {
    positionals: [1, 2],
    options: [],
    usage:
      "invoke <name> [payload-json]\n" +
      "      Runs the active version (payload defaults to {}). Prints the skill's stdout (--json: the whole result);\n" +
      "      for a composed skill, each step (id, skill, version, outcome) on stderr.\n" +
      "      Exit code 0 when the skill succeeded, 1 when it failed.",
  },
  list: {
    positionals: [0, 0],
    options: ["all", "owner"],
    usage:
      "list [--all] [--owner AGENT]\n      Every skill this caller may see (--all: retired and deleted ones too; --owner: only that agent's).",
  },
  show: {
    positionals: [1, 1],
    options: [],
    usage: "show <name>\n      Metadata (owner and visibility included), versions and the active code of one skill.",
  },
  versions: {
    positionals: [1, 1],
    options: [],
    usage: "versions <name>\n      Every version of a skill, oldest first (* marks the active one), with origin, date and test payload.",
  },
  stats: {
    positionals: [1, 1],
    options: [],
    usage: "stats <name>\n      Success rate over the rolling window, invocation velocity, duration percentiles and totals.",
  },
  patch: {
    positionals: [1, 1],
    options: ["find", "replace", "find-file", "replace-file", "test-payload"],
    usage:
      "patch <name> (--find TEXT | --find-file F) (--replace TEXT | --replace-file F) [--test-payload '{...}']\n" +
      "      Replaces the one occurrence of the find text in the active code; the result becomes a new version\n" +
      "      through the same intake and test run as register (test payload defaults to the active version's).\n" +
      "      --find-file/--replace-file take the file's exact content, trailing newline included.",
  },
  route: {
    positionals: [1, Infinity],
    options: ["limit", "format"],
    usage:
      "route <query...> [--limit n] [--format openai|anthropic]\n" +
      "      The skills routing picks for a query; with --format, also their tool definitions in that format.",
  },
  retire: {
    positionals: [0, 1],
    options: ["dry-run", "force"],
    usage:
      "retire [--dry-run] [--force]\n      Retires every degraded skill matching the retirement rule (--dry-run: only report; --force: skills others depend on too).\n" +
      "retire <name> [--force]\n      Retires that one skill by hand (RestoreSkill brings it back).",
  },
  restore: { positionals: [1, 1], options: [], usage: "restore <name>\n      Brings a retired or deleted skill back." },
  rollback: { positionals: [2, 2], options: [], usage: "rollback <name> <version>\n      Makes an earlier version active again." },
  delete: {
    positionals: [1, 1],
    options: ["force"],
    usage:
      "delete <name> [--force]\n      Soft delete (restorable with `restore`); --force deletes a skill others depend on (they are then blocked).",
  },
  protect: {
    positionals: [1, 1],
    options: [],
    usage: "protect <name>\n      Pins a skill: it is never deprecated or retired automatically.",
  },
  unprotect: { positionals: [1, 1], options: [], usage: "unprotect <name>\n      Removes the pin set by `protect`." },
  visibility: {
    positionals: [2, 2],
    options: [],
    usage:
      "visibility <name> private|public\n      Private: its owner and admins only. Public: every agent may see, route to and invoke it.",
  },
  transfer: {
    positionals: [2, 2],
    options: [],
    usage: "transfer <name> <agent>\n      Gives a skill to another agent (admin only).",
  },
  grant: {
    positionals: [2, 2],
    options: ["version"],
    usage:
      "grant <name> agent:<id>|user:<id> [--version N]\n      Shares a skill with one agent, or with one end user (any delegating agent acting for them);\n" +
      "      a private skill becomes internal. --version pins the grantee to that version. Owner or admin.",
  },
  revoke: {
    positionals: [2, 2],
    options: [],
    usage: "revoke <name> agent:<id>|user:<id>\n      Removes a grant; the last one gone, the skill is private again. Owner or admin.",
  },
  grants: { positionals: [1, 1], options: [], usage: "grants <name>\n      The grants of a skill (owner or admin)." },
  enable: { positionals: [1, 1], options: [], usage: "enable <name>\n      Switches a disabled skill back on. Owner or admin." },
  disable: {
    positionals: [1, 1],
    options: [],
    usage: "disable <name>\n      Switches a skill off: kept whole, but neither routed nor invocable. Owner or admin.",
  },
  "wipe-sandbox": {
    positionals: [0, 0],
    options: [],
    usage: "wipe-sandbox\n      Removes every run directory; loses no skill, cuts off runs in flight (admin only).",
  },
  rebuild: {
    positionals: [0, 0],
    options: [],
    usage:
      "rebuild\n" +
      "      Reconciles the canonical store with the registry, rewrites skills_registry.json and re-indexes every\n" +
      "      skill for routing, without a restart (admin only). Prints skills indexed, repairs and duration.",
  },
  compose: {
    positionals: [1, 1],
    options: [],
    usage:
      "compose <file.json|file.yaml>\n" +
      "      Registers a composed skill (or a new version of one) described by the file: name, description,\n" +
      "      parameters_schema, steps [{id, skill, args, when, on_failure}], output, test_payload, visibility.\n" +
      "      The whole composition is test-run first; prints each step of the test run.",
  },
  deps: {
    positionals: [1, 1],
    options: [],
    usage: "deps <name>\n      What a skill depends on, what depends on it, its load order, and what blocks it.",
  },
  catalog: {
    positionals: [0, 0],
    options: [],
    usage:
      "catalog\n      Every skill with its dependency status: ready, blocked (by which dependency), failed, inactive; and every\n      skill folder that is not (yet) a ready skill: discovered, blocked, failed, shadowed (docs/skill-sources.md).",
  },
  sources: {
    positionals: [0, 0],
    options: [],
    usage:
      "sources\n      The folders the last scan of SKILL_ENGINE_SKILL_DIRS found: folder, name, kind, status (discovered, ready,\n" +
      "      blocked, failed, shadowed), version, .skill_id and the reason.",
  },
  rescan: {
    positionals: [0, 0],
    options: [],
    usage: "rescan\n      Scans the skill directories now (admin only): registers new and edited folders, retires removed ones.",
  },
  content: {
    positionals: [1, 1],
    options: [],
    usage: "content <name|skill_id>\n      A folder skill's SKILL.md body ({baseDir} resolved) and its bundled files with sizes.",
  },
  import: {
    positionals: [1, 1],
    options: ["public", "private", "reject-duplicates"],
    usage:
      "import <bundle.tar.gz|bundle.zip> [--public|--private] [--reject-duplicates]\n" +
      "      Registers the skill folder in the bundle through the same checks and test run as every skill.\n" +
      "      Near-duplicates of skills the caller can see are listed; --reject-duplicates refuses one.",
  },
  export: {
    positionals: [1, 1],
    options: ["output"],
    usage:
      "export <name> [-o file]\n      Writes the skill as a .tar.gz bundle (default <name>.tar.gz); plain skills get a generated SKILL.md.",
  },
  test: {
    positionals: [0, Infinity],
    options: ["junit"],
    usage:
      "test [names...] [--junit file.xml]\n" +
      "      Re-runs the stored test payload of every listed (not retired or deleted) skill, or of the named ones,\n" +
      "      through InvokeSkill: each run counts as an invocation in the skill's telemetry and health.\n" +
      "      Reports pass/fail with the one-line cause and 'N passed, M failed'; exit code 1 on any failure.\n" +
      "      --junit writes a JUnit XML report for CI. Progress goes to stderr.",
  },
  sessions: {
    positionals: [2, 2],
    options: [],
    usage:
      "sessions record <file.json>\n" +
      '      Records a session {"session_key": "...", "tool_calls": [{"tool": "...", "arguments": {...}}]}: repeated tool\n' +
      "      sequences across 3+ sessions become candidates (docs/learning.md#patterns). Prints the candidates it made or touched.",
  },
  candidates: {
    positionals: [0, 0],
    options: ["status"],
    usage:
      "candidates [--status candidate|promoted|dismissed]\n      This agent's skill candidates: id, status, sessions, skill, tool sequence.",
  },
  promote: {
    positionals: [1, 1],
    options: ["name", "description"],
    usage:
      "promote <candidate-id> [--name N] [--description D]\n" +
      "      Turns a candidate into an auto-created composed skill, or evolves the auto-created skill it overlaps by 70%+.",
  },
  dismiss: {
    positionals: [1, 1],
    options: [],
    usage: "dismiss <candidate-id>\n      Marks a candidate dismissed.",
  },
  outcome: {
    positionals: [3, 3],
    options: ["note"],
    usage:
      "outcome <name> <invocation-id> ok|fail [--note TEXT]\n" +
      "      Whether an invocation achieved its goal (invoke --json shows invocation_id); overrides its exit code in the window.",
  },
  lessons: {
    positionals: [1, 2],
    options: [
      "trigger",
      "do",
      "avoid",
      "domain",
      "confidence",
      "source",
      "challenge-hash",
      "challenge-file",
      "public",
      "private",
      "scope",
      "limit",
      "all",
      "owner",
      "original",
      "with-lesson",
      "dry-run",
      "min-retrievals",
      "max-drop",
    ],
    usage:
      "lessons add --trigger T --do D [--avoid A] --domain X [--domain Y]... [--confidence 0.5] [--source S]\n" +
      "              [--challenge-hash H] [--challenge-file F] [--public]\n" +
      "      Adds a lesson to this caller's playbook; the challenge file's text feeds the generalization guard.\n" +
      "lessons list [--scope today|week|all] [--domain D] [--limit n] [--all] [--owner AGENT]\n" +
      "      The playbook by utility, with every counter (--all: archived and deleted lessons too).\n" +
      "lessons show <id>\n" +
      "lessons verify <id> --original pass[:attempts]|fail --with-lesson pass[:attempts]|fail\n" +
      "      Records a verification run; verified only when the outcome strictly improves.\n" +
      "lessons prune [--dry-run] [--min-retrievals n] [--max-drop fraction]\n" +
      "lessons pin <id> | unpin <id> | delete <id> | restore <id>",
  },
  playbook: {
    positionals: [1, Infinity],
    options: ["limit"],
    usage:
      'playbook <query...> [--limit n]\n      Prints the "### SKILL PLAYBOOK:" block the playbook injects for a query (nothing when no lesson qualifies).',
  },
};

export function usage(command?: string): string {
  const global =
    "Global options:\n" +
    `  --address HOST:PORT  the service (default $SKILLCTL_ADDRESS or ${DEFAULT_ADDRESS})\n` +
    "  --token-file PATH    read the bearer token from PATH (trimmed; keep it chmod 600); without it,\n" +
    "                       $SKILLCTL_TOKEN. There is deliberately no --token flag: a token on the command\n" +
    "                       line ends up in shell history and in `ps` output for every local user.\n" +
    "  --tls                TLS, verifying the server against the system's root certificates\n" +
    "  --tls-ca PATH        TLS, verifying the server against the CA certificate(s) in PATH (PEM;\n" +
    "                       default $SKILLCTL_TLS_CA). Without either, the connection is plaintext.\n" +
    "  --json               machine-readable output on stdout (progress and warnings go to stderr)\n" +
    `  --timeout SECONDS    deadline of each call (default ${DEFAULT_TIMEOUT_SECONDS})\n` +
    "  -h, --help           this help\n\n" +
    "Every call carries `authorization: Bearer <token>` when a token is given; services with tokens\n" +
    "configured answer UNAUTHENTICATED without one. A skill another agent keeps private answers NOT_FOUND;\n" +
    "changing another agent's public skill, and the admin-only commands, answer PERMISSION_DENIED.\n\n" +
    "Exit codes: 0 success; 1 a skill (or a skill test) failed; 2 usage or gRPC error (`skillctl: CODE: details`).\n";
  const spec = command === undefined ? undefined : COMMANDS[command];
  if (spec !== undefined) return `usage: skillctl ${spec.usage}\n\n${global}`;
  const all = Object.values(COMMANDS)
    .map((c) => `  ${c.usage}`)
    .join("\n");
  return `usage: skillctl [global options] <command> [arguments]\n\nCommands:\n${all}\n\n${global}`;
}

/** Where the bearer token comes from (it is read later, by the entry point: parsing stays pure). */
export type TokenSource = { kind: "file"; path: string } | { kind: "env"; token: string } | { kind: "none" };

/** Plaintext (the default), TLS with the system roots, or TLS with a CA file. */
export type TlsMode = { kind: "insecure" } | { kind: "system-roots" } | { kind: "ca-file"; path: string };

export interface GlobalOptions {
  address: string;
  json: boolean;
  timeoutMs: number;
  token: TokenSource;
  tls: TlsMode;
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

/** `--token`, `--token=...`: refused with the reason, rather than "unknown option". */
const TOKEN_FLAG = /^--token(=|$)/;

export function parseCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv): ParsedArgs {
  const endOfOptions = argv.indexOf("--");
  if (argv.slice(0, endOfOptions < 0 ? argv.length : endOfOptions).some((a) => TOKEN_FLAG.test(a))) {
    throw new UsageError(
      "there is no --token option: a token on the command line lands in shell history and in `ps`. " +
        "Set SKILLCTL_TOKEN or use --token-file PATH",
    );
  }
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(errorMessage(error));
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
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0)
    throw new UsageError(`--timeout must be a positive number of seconds, got '${timeoutText}'`);
  const address = (values.address as string | undefined) ?? (env.SKILLCTL_ADDRESS || DEFAULT_ADDRESS);
  if (address.trim() === "") throw new UsageError("--address must not be empty");

  return {
    kind: "command",
    command,
    positionals,
    options: values,
    global: {
      address,
      json: values.json === true,
      timeoutMs: Math.round(timeoutSeconds * 1000),
      token: tokenSource(values["token-file"] as string | undefined, env),
      tls: tlsMode(values.tls === true, values["tls-ca"] as string | undefined, env),
    },
  };
}

/** --token-file wins over $SKILLCTL_TOKEN (the command line is the more specific of the two). */
function tokenSource(file: string | undefined, env: NodeJS.ProcessEnv): TokenSource {
  if (file !== undefined) {
    if (file === "") throw new UsageError("--token-file needs a file name");
    return { kind: "file", path: file };
  }
  const token = env.SKILLCTL_TOKEN?.trim();
  return token ? { kind: "env", token } : { kind: "none" };
}

/** --tls-ca (or $SKILLCTL_TLS_CA) names the CA; --tls alone trusts the system roots. */
function tlsMode(tls: boolean, caFlag: string | undefined, env: NodeJS.ProcessEnv): TlsMode {
  if (caFlag === "") throw new UsageError("--tls-ca needs a file name");
  const ca = caFlag ?? (env.SKILLCTL_TLS_CA || undefined);
  if (ca !== undefined) return { kind: "ca-file", path: ca };
  return tls ? { kind: "system-roots" } : { kind: "insecure" };
}

/** A positive integer option or argument, or a UsageError naming it. */
export function positiveInteger(text: string, what: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 0xffffffff)
    throw new UsageError(`${what} must be a positive integer, got '${text}'`);
  return Number(text);
}

/** Checks that text is JSON (the service would say so too, but later and less precisely). */
export function jsonText(text: string, what: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${what} is not valid JSON: ${errorMessage(error)}`);
  }
  return text;
}

/** `private` or `public` (any case). */
export function visibilityWord(text: string): "private" | "public" {
  const word = text.toLowerCase();
  if (word !== "private" && word !== "public") throw new UsageError(`visibility must be private or public, got '${text}'`, "visibility");
  return word;
}
