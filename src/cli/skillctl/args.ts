import { parseArgs } from "node:util";
import { errorMessage } from "../../errors/index.js";
import { CATALOG_COMMANDS } from "./catalog-command-table.js";
import { type CommandSpec, GLOBAL, OPTIONS, type OptionName } from "./command-options.js";
import { LEARNING_COMMANDS } from "./learning-command-table.js";
import { OPERATOR_COMMANDS } from "./operator-command-table.js";
import { SECRET_COMMANDS } from "./secret-command-table.js";
import { SKILL_COMMANDS } from "./skill-command-table.js";

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

/** The command table, one module a topic (docs/operations.md#operator-cli). */
export const COMMANDS: Record<string, CommandSpec> = {
  ...SKILL_COMMANDS,
  ...OPERATOR_COMMANDS,
  ...CATALOG_COMMANDS,
  ...LEARNING_COMMANDS,
  ...SECRET_COMMANDS,
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
    "  --page-size N        items a call of a listing asks for; every page is fetched and printed\n" +
    "                       (default: the service's, 1000; docs/api.md#pagination)\n" +
    "  -h, --help           this help\n\n" +
    "Every call carries `authorization: Bearer <token>` when a token is given; services with tokens\n" +
    "configured answer UNAUTHENTICATED without one. A skill another agent keeps private answers NOT_FOUND;\n" +
    "changing another agent's public skill, and the admin-only commands, answer PERMISSION_DENIED.\n\n" +
    "Exit codes: 0 success; 1 a skill (or a skill test) failed; 2 usage or gRPC error (`skillctl: CODE: details`),\n" +
    "or a returned file that was not written (`skillctl: not written: PATH: reason`).\n";
  const spec = command === undefined ? undefined : COMMANDS[command];
  if (spec !== undefined) return `usage: skillctl ${spec.usage}\n\n${global}`;
  const all = Object.values(COMMANDS)
    .map((c) => `  ${c.usage}`)
    .join("\n");
  return `usage: skillctl [global options] <command> [arguments]\n\nCommands:\n${all}\n\n${global}`;
}

/** Where the bearer token comes from (it is read later, by the entry point: parsing stays pure). */
export type TokenSource =
  | { kind: "file"; path: string }
  /** `variable`: where it was read, for messages (@default "SKILLCTL_TOKEN"; the MCP bin reads SKILL_ENGINE_TOKEN). */
  | { kind: "env"; token: string; variable?: string }
  | { kind: "none" };

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
