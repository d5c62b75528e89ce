import { parseCommandLine, usage, UsageError } from "./args.js";
import { connect, describeRpcError, isServiceError, rpcErrorHint } from "./client.js";
import * as commands from "./commands.js";
import * as compositionCommands from "./composition-commands.js";
import * as sourceCommands from "./source-commands.js";
import { channelCredentials, resolveToken, transportWarnings } from "./credentials.js";
import { envs, runtimes } from "./environment-commands.js";
import type { Io } from "./format.js";
import * as learningCommands from "./learning-commands.js";
import { lessons, playbook } from "./lesson-commands.js";
import * as sharingCommands from "./sharing-commands.js";
import { secrets } from "./secret-commands.js";
import { test } from "./test-command.js";

const HANDLERS: Record<string, commands.Command> = {
  whoami: commands.whoami,
  register: commands.register,
  invoke: commands.invoke,
  list: commands.list,
  show: commands.show,
  versions: commands.versions,
  stats: commands.stats,
  patch: commands.patch,
  route: commands.route,
  retire: commands.retire,
  restore: commands.restore,
  rollback: commands.rollback,
  delete: commands.remove,
  protect: commands.protect,
  unprotect: commands.unprotect,
  visibility: commands.visibility,
  transfer: commands.transfer,
  "wipe-sandbox": commands.wipeSandbox,
  rebuild: commands.rebuild,
  envs,
  runtimes,
  test,
  compose: compositionCommands.compose,
  deps: compositionCommands.deps,
  catalog: compositionCommands.catalog,
  sources: sourceCommands.sources,
  rescan: sourceCommands.rescan,
  content: sourceCommands.content,
  import: sourceCommands.importBundle,
  export: sourceCommands.exportSkill,
  lessons,
  playbook,
  grant: sharingCommands.grant,
  revoke: sharingCommands.revoke,
  grants: sharingCommands.grants,
  enable: sharingCommands.enable,
  disable: sharingCommands.disable,
  sessions: learningCommands.sessions,
  candidates: learningCommands.candidates,
  promote: learningCommands.promote,
  dismiss: learningCommands.dismiss,
  outcome: learningCommands.outcome,
  secrets,
};

/** skillctl without the process: argv after the script name, the environment, where output goes. Returns the exit code. */
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
  const { global } = parsed;
  let token;
  let channel;
  try {
    token = await resolveToken(global.token);
    channel = await channelCredentials(global.tls);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`skillctl: ${error.message}\n`);
    return 2;
  }
  for (const warning of [...token.warnings, ...transportWarnings(global, token.token)]) io.err(`skillctl: ${warning}\n`);

  const rpc = connect(global.address, { timeoutMs: global.timeoutMs, channel, token: token.token });
  try {
    return await handler({ command: parsed.command, rpc, io, json: global.json, positionals: parsed.positionals, options: parsed.options });
  } catch (error) {
    if (isServiceError(error)) {
      io.err(`skillctl: ${describeRpcError(error)}\n`);
      const hint = rpcErrorHint(error, {
        address: global.address,
        tokenOrigin: token.origin,
        tokenGiven: token.token !== undefined,
        tls: global.tls.kind !== "insecure",
      });
      if (hint !== undefined) io.err(`skillctl: ${hint}\n`);
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
