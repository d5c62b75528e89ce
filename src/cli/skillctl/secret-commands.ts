import { readFile } from "node:fs/promises";
import { errorMessage } from "../../errors/index.js";
import type { SecretInfo } from "../../gen/skillengine/v1/secrets.js";
import { UsageError } from "./args.js";
import { everyPage } from "./pages.js";
import type { Command, CommandContext } from "./commands.js";
import { table, toJson } from "./format.js";

/**
 * `skillctl secrets set|delete|list|rotate-key` (docs/security.md#secrets). A value is read from stdin or
 * --value-file, never from the command line, where `ps` and the shell's history would show it; it is never printed.
 */
export const secrets: Command = async (ctx) => {
  const sub = ctx.positionals[0] ?? "";
  const name = ctx.positionals[1];
  const needsName = sub === "set" || sub === "delete";
  if (needsName && name === undefined) throw new UsageError(`'secrets ${sub}' needs the secret's NAME`, "secrets");
  if (!needsName && name !== undefined) throw new UsageError(`'secrets ${sub}' takes no NAME`, "secrets");
  if (sub !== "set" && ctx.options["value-file"] !== undefined) throw new UsageError("--value-file goes with 'secrets set'", "secrets");
  switch (sub) {
    case "set":
      return set(ctx, name ?? "");
    case "delete":
      await ctx.rpc.call(ctx.rpc.raw.deleteSecret, { name: name ?? "" });
      ctx.io.out(ctx.json ? toJson({ deleted: name }) : `secret ${name} deleted\n`);
      return 0;
    case "list":
      return list(ctx);
    case "rotate-key": {
      const response = await ctx.rpc.call(ctx.rpc.raw.rotateSecretsKey, {});
      ctx.io.out(
        ctx.json ? toJson(response) : `re-encrypted ${response.rotated} secret${response.rotated === 1 ? "" : "s"} under a new key\n`,
      );
      return 0;
    }
    default:
      throw new UsageError(`secrets takes set, delete, list or rotate-key, got '${sub}'`, "secrets");
  }
};

async function set(ctx: CommandContext, name: string): Promise<number> {
  const file = ctx.options["value-file"];
  const value = typeof file === "string" ? await valueFromFile(file) : await valueFromStdin(name);
  const response = await ctx.rpc.call(ctx.rpc.raw.setSecret, { name, value });
  const secret = response.secret;
  if (ctx.json) {
    ctx.io.out(toJson(response));
    return 0;
  }
  const replaced =
    secret?.createdAt !== undefined && secret.updatedAt !== undefined && secret.createdAt.getTime() !== secret.updatedAt.getTime();
  ctx.io.out(`secret ${name} ${replaced ? "replaced" : "set"}${secret?.usedBy.length ? `; used by ${secret.usedBy.join(", ")}` : ""}\n`);
  return 0;
}

async function list(ctx: CommandContext): Promise<number> {
  const response = await everyPage(ctx, "secrets", (page) => ctx.rpc.call(ctx.rpc.raw.listSecrets, page));
  if (ctx.json) {
    ctx.io.out(toJson(response));
    return 0;
  }
  if (response.secrets.length === 0) {
    ctx.io.out("no secrets (set one with: skillctl secrets set NAME < file)\n");
    return 0;
  }
  const rows = [
    ["NAME", "CREATED", "UPDATED", "USED BY"],
    ...response.secrets.map((s: SecretInfo) => [s.name, when(s.createdAt), when(s.updatedAt), s.usedBy.join(", ") || "-"]),
  ];
  ctx.io.out(table(rows));
  return 0;
}

async function valueFromFile(file: string): Promise<string> {
  if (file === "") throw new UsageError("--value-file needs a file name", "secrets");
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    throw new UsageError(`cannot read --value-file ${file}: ${errorMessage(error)}`, "secrets");
  }
  return secretText(bytes, `--value-file ${file}`);
}

/** All of stdin; a terminal is refused rather than read, since what is typed there is echoed on the screen. */
async function valueFromStdin(name: string): Promise<string> {
  if (process.stdin.isTTY === true) {
    throw new UsageError(
      `secrets set reads the value from stdin or --value-file, and stdin is a terminal (it would echo the value): ` +
        `skillctl secrets set ${name} < file, or --value-file PATH`,
      "secrets",
    );
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return secretText(Buffer.concat(chunks), "stdin");
}

/** The value as UTF-8 text, without one final line ending (what `echo` and editors add, never part of a key). */
function secretText(bytes: Buffer, where: string): string {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new UsageError(`the value on ${where} is not UTF-8 text; a secret's value is UTF-8 (encode binary, e.g. in base64)`, "secrets");
  }
  return text.replace(/\r?\n$/, "");
}

function when(date: Date | undefined): string {
  return date ? date.toISOString().slice(0, 19).replace("T", " ") : "-";
}
