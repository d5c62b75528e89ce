import { writeFile } from "node:fs/promises";
import { status } from "@grpc/grpc-js";
import type { InvokeSkillResponse } from "../../gen/skillengine/v1/execution.js";
import { UsageError } from "./args.js";
import { everyPage } from "./pages.js";
import { describeRpcError, isServiceError } from "./client.js";
import type { Command, CommandContext } from "./commands.js";
import { failureCause, progress, toJson } from "./format.js";
import { junitXml } from "./junit.js";
import { errorMessage } from "../../errors/index.js";

export interface SkillTestOutcome {
  name: string;
  passed: boolean;
  /** The version that ran (0 when the run never happened). */
  version: number;
  testPayload: string;
  durationMs: number;
  /** One-line cause of a failure; empty when it passed. */
  cause: string;
  /** The skill's stderr on a failed run (for the JUnit report). */
  stderr: string;
}

/** Finds the active version's stored test (payload and test files) and runs it through InvokeSkill. */
async function testOne(ctx: CommandContext, name: string): Promise<SkillTestOutcome> {
  const started = Date.now();
  const outcome: SkillTestOutcome = { name, passed: false, version: 0, testPayload: "", durationMs: 0, cause: "", stderr: "" };
  try {
    const { versions } = await everyPage(ctx, "versions", (page) => ctx.rpc.call(ctx.rpc.raw.listSkillVersions, { name, ...page }));
    const active = versions.find((v) => v.active);
    if (active === undefined) {
      outcome.cause = "no active version";
      return outcome;
    }
    outcome.testPayload = active.testPayload || "{}";
    // The stored test is its payload and the test files kept with the version (docs/files.md#test-files).
    const { testFiles } = await ctx.rpc.call(ctx.rpc.raw.getSkill, { name });
    const response: InvokeSkillResponse = await ctx.rpc.call(ctx.rpc.raw.invokeSkill, {
      name,
      payload: outcome.testPayload,
      payloadJson: undefined,
      routeId: "",
      files: testFiles,
    });
    const result = response.result;
    outcome.version = response.version;
    outcome.durationMs = result?.durationMs ?? Date.now() - started;
    outcome.passed = result?.success === true;
    if (!outcome.passed) {
      outcome.cause = failureCause(result);
      outcome.stderr = result?.stderr ?? "";
    }
    return outcome;
  } catch (error) {
    // A refused token fails every skill alike: that is the caller's problem, not the skills' (exit 2, with the hint).
    if (!isServiceError(error) || error.code === status.UNAUTHENTICATED) throw error;
    // A skill that cannot be run (unknown, retired, bad payload...) fails its test; the run goes on.
    outcome.durationMs = Date.now() - started;
    outcome.cause = describeRpcError(error);
    return outcome;
  }
}

export const summaryLine = (passed: number, failed: number): string => `${passed} passed, ${failed} failed`;

export const test: Command = async (ctx) => {
  const junit = ctx.options.junit;
  if (junit !== undefined && (typeof junit !== "string" || junit === "")) throw new UsageError("--junit needs a file name", "test");
  const names =
    ctx.positionals.length > 0
      ? [...new Set(ctx.positionals)]
      : (
          await everyPage(ctx, "skills", (page) => ctx.rpc.call(ctx.rpc.raw.listSkills, { includeInactive: false, owner: "", ...page }))
        ).skills.map((s) => s.name);

  // On stderr, so stdout stays the report (or the JSON): one line rewritten in place on a terminal,
  // one line per skill elsewhere (a CI log then shows which skill a slow or stuck run is on).
  const line = progress(ctx.io, true);
  const outcomes: SkillTestOutcome[] = [];
  for (const [index, name] of names.entries()) {
    line.show(`[${index + 1}/${names.length}] testing ${name}…`);
    const outcome = await testOne(ctx, name).finally(() => line.done());
    outcomes.push(outcome);
    if (!ctx.json) {
      ctx.io.out(
        outcome.passed
          ? `PASS ${name} (v${outcome.version}, ${outcome.durationMs} ms)\n`
          : `FAIL ${name}${outcome.version ? ` (v${outcome.version})` : ""}: ${outcome.cause}\n`,
      );
    }
  }
  const failed = outcomes.filter((o) => !o.passed).length;
  const passed = outcomes.length - failed;

  if (typeof junit === "string") {
    const xml = junitXml(
      "skillctl test",
      outcomes.map((o) => ({
        name: o.name,
        classname: "skills",
        time: o.durationMs / 1000,
        ...(o.passed ? {} : { failure: { message: o.cause, body: `test payload: ${o.testPayload}\n${o.stderr}` } }),
      })),
    );
    try {
      await writeFile(junit, xml, "utf8");
    } catch (error) {
      throw new UsageError(`cannot write ${junit}: ${errorMessage(error)}`);
    }
  }

  if (ctx.json) {
    ctx.io.out(
      toJson({
        results: outcomes.map(({ stderr: _stderr, ...o }) => o),
        passed,
        failed,
        summary: summaryLine(passed, failed),
      }),
    );
  } else {
    ctx.io.out(`${summaryLine(passed, failed)}\n`);
  }
  return failed > 0 ? 1 : 0;
};
