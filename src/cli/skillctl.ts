#!/usr/bin/env node
/**
 * skillctl: the operator CLI of the skill engine, talking gRPC to a running service.
 * `skillctl --help` lists the commands. Exit codes: 0 ok, 1 a skill (test) failed, 2 usage or gRPC error.
 */
import { parseCommandLine, usage, UsageError } from "./skillctl/args.js";
import { connect, describeRpcError, isServiceError } from "./skillctl/client.js";
import * as commands from "./skillctl/commands.js";
import type { Io } from "./skillctl/format.js";
import { test } from "./skillctl/test-command.js";

const HANDLERS: Record<string, commands.Command> = {
  register: commands.register,
  invoke: commands.invoke,
  list: commands.list,
  show: commands.show,
  route: commands.route,
  retire: commands.retire,
  restore: commands.restore,
  rollback: commands.rollback,
  delete: commands.remove,
  "wipe-sandbox": commands.wipeSandbox,
  test,
};

export async function main(argv: readonly string[], env: NodeJS.ProcessEnv, io: Io): Promise<number> {
  let parsed;
  try {
    parsed = parseCommandLine(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`skillctl: ${error.message}\nRun 'skillctl ${error.command ? `${error.command} ` : ""}--help' for usage.\n`);
    return 2;
  }
  if (parsed.kind === "help") {
    io.out(usage(parsed.command));
    return 0;
  }
  const handler = HANDLERS[parsed.command];
  if (handler === undefined) {
    io.err(`skillctl: unknown command '${parsed.command}'\n`);
    return 2;
  }
  const rpc = connect(parsed.global.address, parsed.global.timeoutMs);
  try {
    return await handler({ rpc, io, json: parsed.global.json, positionals: parsed.positionals, options: parsed.options });
  } catch (error) {
    if (isServiceError(error)) {
      io.err(`skillctl: ${describeRpcError(error)}\n`);
      return 2;
    }
    if (error instanceof UsageError) {
      io.err(`skillctl: ${error.message}\n`);
      return 2;
    }
    throw error;
  } finally {
    rpc.close();
  }
}

const processIo: Io = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  errIsTty: process.stderr.isTTY === true,
};

main(process.argv.slice(2), process.env, processIo).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`skillctl: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 3;
  },
);
