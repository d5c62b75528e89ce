import {
  type Environment,
  EnvironmentRebuildResult,
  environmentRebuildResultToJSON,
  environmentStatusToJSON,
  type ListEnvironmentsResponse,
} from "../../gen/skillengine/v1/environments.js";
import { UsageError } from "./args.js";
import { everyPage } from "./pages.js";
import type { Command, CommandContext } from "./commands.js";
import { oneLine, progress, table, toJson } from "./format.js";

/** `envs` lists the environments; `envs rebuild [--missing-only]` rebuilds them from their locks (docs/packages.md#operators). */
export const envs: Command = async (ctx) => {
  const sub = ctx.positionals[0];
  if (sub === "rebuild") return rebuild(ctx);
  if (sub !== undefined) throw new UsageError(`envs takes no argument but 'rebuild', got '${sub}'`, "envs");
  if (ctx.options["missing-only"] === true) throw new UsageError("--missing-only goes with 'envs rebuild'", "envs");
  const response = await everyPage(ctx, "environments", (page) => ctx.rpc.call(ctx.rpc.raw.listEnvironments, page));
  if (ctx.json) {
    ctx.io.out(toJson(environmentsJson(response)));
    return 0;
  }
  if (response.environments.length === 0) {
    ctx.io.out("no environments (no skill declares packages)\n");
    return 0;
  }
  const rows = [["ID", "STATUS", "SIZE", "SKILLS", "FILES", "BUILT", "DECLARES"]];
  for (const e of response.environments) {
    rows.push([
      e.id,
      statusWord(e),
      mebibytes(e.sizeBytes),
      String(e.skills),
      String(e.lock.length),
      e.builtAt ? e.builtAt.toISOString().slice(0, 19).replace("T", " ") : "-",
      oneLine([...e.requirements, ...e.systemPackages.map((name) => `deb:${name}`)].join(" "), 80),
    ]);
  }
  ctx.io.out(table(rows));
  for (const e of response.environments) if (e.error !== "") ctx.io.out(`${e.id}: ${e.error}\n`);
  return 0;
};

async function rebuild(ctx: CommandContext): Promise<number> {
  const missingOnly = ctx.options["missing-only"] === true;
  const line = progress(ctx.io, true);
  line.show(`rebuilding ${missingOnly ? "missing environments" : "every environment"} from their locks…`);
  const response = await ctx.rpc.call(ctx.rpc.raw.rebuildEnvironments, { missingOnly }).finally(() => line.done());
  const failed = response.environments.filter((e) => e.result === EnvironmentRebuildResult.ENVIRONMENT_REBUILD_RESULT_FAILED);
  if (ctx.json) {
    ctx.io.out(
      toJson({ ...response, environments: response.environments.map((e) => ({ ...e, result: environmentRebuildResultToJSON(e.result) })) }),
    );
    return failed.length > 0 ? 1 : 0;
  }
  for (const e of response.environments) ctx.io.out(`${resultWord(e.result)} ${e.id}${e.error ? `: ${e.error}` : ""}\n`);
  const count = (result: EnvironmentRebuildResult): number => response.environments.filter((e) => e.result === result).length;
  ctx.io.out(
    `${count(EnvironmentRebuildResult.ENVIRONMENT_REBUILD_RESULT_REBUILT)} rebuilt, ` +
      `${count(EnvironmentRebuildResult.ENVIRONMENT_REBUILD_RESULT_SKIPPED)} skipped, ${failed.length} failed in ${response.durationMs} ms\n`,
  );
  return failed.length > 0 ? 1 : 0;
}

/** `runtimes`: CheckRuntimes; exit code 1 when the Pythons differ, a configured source does not answer or apt cannot fetch. */
export const runtimes: Command = async (ctx) => {
  const report = await ctx.rpc.call(ctx.rpc.raw.checkRuntimes, {});
  const source = report.packageSource;
  const debian = report.debian;
  const sourceBroken = source !== undefined && source.kind !== "none" && !source.reachable;
  const healthy = report.pythonMatches && !sourceBroken && debian?.available === true;
  if (ctx.json) {
    ctx.io.out(toJson(report));
    return healthy ? 0 : 1;
  }
  const rows: [string, string][] = [
    ["sandbox python", report.sandboxPython || "unknown (the sandbox image could not be asked)"],
    [
      "installer",
      report.installerPython
        ? `python ${report.installerPython}${report.pip ? `, ${report.pip}` : ", no pip (install Debian's python3-pip)"}`
        : "does not run (SKILL_ENGINE_PIP_PYTHON)",
    ],
    ["pythons match", report.pythonMatches ? "yes" : "NO: wheels pip picks may not load in the sandbox"],
    [
      "packages from",
      source === undefined || source.kind === "none"
        ? `nowhere: ${source?.detail ?? "no package source"}`
        : `${source.kind} ${source.location} (${source.reachable ? "answers" : "DOES NOT ANSWER"}: ${source.detail})`,
    ],
    ["debian", debian?.available ? `available (${debian.detail})` : `NOT AVAILABLE: ${debian?.detail ?? "unknown"}`],
  ];
  ctx.io.out(rows.map(([key, value]) => `${`${key}:`.padEnd(16)}${value}\n`).join(""));
  return healthy ? 0 : 1;
};

function environmentsJson(response: Pick<ListEnvironmentsResponse, "environments">): unknown {
  return { environments: response.environments.map((e) => ({ ...e, status: environmentStatusToJSON(e.status) })) };
}

function statusWord(environment: Environment): string {
  return environmentStatusToJSON(environment.status)
    .replace(/^ENVIRONMENT_STATUS_/, "")
    .toLowerCase();
}

function resultWord(result: EnvironmentRebuildResult): string {
  return environmentRebuildResultToJSON(result)
    .replace(/^ENVIRONMENT_REBUILD_RESULT_/, "")
    .toLowerCase();
}

function mebibytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}
