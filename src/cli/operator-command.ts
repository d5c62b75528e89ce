import { loadConfigOrExplain, type SkillEngineConfig } from "../config/index.js";
import { errorMessage } from "../errors/index.js";

/** An offline operator tool (`npm run <name>`): run with the service stopped, against its configured home. */
export interface OperatorCommand {
  /** The npm script name; prefixes every error line. */
  readonly name: string;
  readonly usage: string;
  /** Flags the command accepts besides --help/-h. */
  readonly flags: readonly string[];
  /**
   * Some libraries keep the event loop alive (the embedding worker of routing); such commands
   * exit as soon as their work is done.
   * @default false
   */
  readonly exitWhenDone?: boolean;
  /** Does the work and returns the summary for stdout; a thrown error becomes one line on stderr. */
  run(config: SkillEngineConfig, flags: ReadonlySet<string>): Promise<string>;
}

/**
 * The shared entry of the operator tools: --help prints the usage, an unknown argument is refused
 * with it, the configuration is read once from the environment (problems explained, no stack),
 * and the exit code says whether the work succeeded.
 */
export function runOperatorCommand(command: OperatorCommand, argv = process.argv.slice(2), env = process.env): void {
  const finish = (code: number): void => {
    if (command.exitWhenDone) process.exit(code);
    process.exitCode = code;
  };
  execute(command, argv, env).then(finish, (error: unknown) => {
    process.stderr.write(`${command.name}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    finish(1);
  });
}

async function execute(command: OperatorCommand, argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(command.usage);
    return 0;
  }
  const unknown = argv.filter((argument) => !command.flags.includes(argument));
  if (unknown.length > 0) {
    process.stderr.write(`${command.name}: unknown argument ${unknown.join(" ")}\n${command.usage}`);
    return 1;
  }
  const config = loadConfigOrExplain(command.name, env);
  if (!config) return 1;
  try {
    process.stdout.write(await command.run(config, new Set(argv)));
    return 0;
  } catch (error) {
    process.stderr.write(`${command.name}: ${errorMessage(error)}\n`);
    return 1;
  }
}
