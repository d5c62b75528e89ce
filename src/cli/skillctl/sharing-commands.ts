import type { SkillGrant } from "../../gen/skillengine/v1/sharing.js";
import { positiveInteger, UsageError } from "./args.js";
import { everyPage } from "./pages.js";
import type { Command, CommandContext } from "./commands.js";
import { skillJson, skillLine, toJson } from "./format.js";

const arg = (ctx: CommandContext, index: number): string => ctx.positionals[index] ?? "";

/** `agent:<id>` or `user:<id>` (docs/security.md#grants-and-visibility). */
function grantee(ctx: CommandContext, command: string): { granteeAgent: string; granteeUser: string } {
  const text = arg(ctx, 1);
  const colon = text.indexOf(":");
  const kind = text.slice(0, colon);
  const id = text.slice(colon + 1);
  if (colon < 0 || id === "" || (kind !== "agent" && kind !== "user")) {
    throw new UsageError(`the grantee must be agent:<agent-id> or user:<user-id>, got '${text}'`, command);
  }
  return kind === "agent" ? { granteeAgent: id, granteeUser: "" } : { granteeAgent: "", granteeUser: id };
}

function grantLine(grant: SkillGrant): string {
  const who = grant.granteeAgent !== "" ? `agent:${grant.granteeAgent}` : `user:${grant.granteeUser}`;
  const pin = grant.version > 0 ? `pinned to v${grant.version}` : "follows the active version";
  return `${who}  ${pin}  (granted by ${grant.grantedBy}${grant.grantedAt ? ` at ${grant.grantedAt.toISOString()}` : ""})`;
}

export const grant: Command = async (ctx) => {
  const version = typeof ctx.options.version === "string" ? positiveInteger(ctx.options.version, "--version") : 0;
  const response = await ctx.rpc.call(ctx.rpc.raw.grantSkill, { name: arg(ctx, 0), ...grantee(ctx, "grant"), version });
  ctx.io.out(
    ctx.json
      ? toJson({ skill: skillJson(response.skill), grant: response.grant })
      : `granted ${skillLine(response.skill)}: ${response.grant ? grantLine(response.grant) : ""}\n`,
  );
  return 0;
};

export const revoke: Command = async (ctx) => {
  const response = await ctx.rpc.call(ctx.rpc.raw.revokeSkill, { name: arg(ctx, 0), ...grantee(ctx, "revoke") });
  ctx.io.out(
    ctx.json
      ? toJson({ skill: skillJson(response.skill), revoked: response.revoked })
      : `${response.revoked ? "revoked" : "no such grant on"} ${skillLine(response.skill)}\n`,
  );
  return 0;
};

export const grants: Command = async (ctx) => {
  const response = await everyPage(ctx, "grants", (page) => ctx.rpc.call(ctx.rpc.raw.listGrants, { name: arg(ctx, 0), ...page }));
  if (ctx.json) ctx.io.out(toJson(response));
  else if (response.grants.length === 0) ctx.io.out(`${arg(ctx, 0)} has no grants\n`);
  else for (const g of response.grants) ctx.io.out(`${grantLine(g)}\n`);
  return 0;
};

function switchTo(enabled: boolean): Command {
  return async (ctx) => {
    const response = await ctx.rpc.call(ctx.rpc.raw.setSkillEnabled, { name: arg(ctx, 0), enabled });
    ctx.io.out(
      ctx.json ? toJson({ skill: skillJson(response.skill) }) : `${enabled ? "enabled" : "disabled"} ${skillLine(response.skill)}\n`,
    );
    return 0;
  };
}

export const enable = switchTo(true);
export const disable = switchTo(false);
