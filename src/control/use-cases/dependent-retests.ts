import { EgressNotAllowedError, errorMessage, RunCancelledError, SecretMissingError } from "../../errors/index.js";
import { canSee } from "../access/index.js";
import type { CallContext } from "../call-context.js";
import type { SkillRecord } from "../registry/index.js";
import type { SkillCore } from "./skill-core.js";
import type { SkillRuns } from "./skill-runs.js";

export interface DependentRetest {
  readonly name: string;
  readonly passed: boolean;
  readonly error: string;
}

/** How many re-tests of dependents the caller may not see passed and failed. */
export interface HiddenRetests {
  readonly passed: number;
  readonly failed: number;
}

export interface RetestReport {
  readonly dependentsRetested: DependentRetest[];
  readonly hiddenDependentsRetested: HiddenRetests;
}

/**
 * Re-runs the stored tests of the live skills that depend on a new version unpinned
 * (docs/composition.md#re-tests). A failure marks the dependent with a warning its viewers see.
 * The caller hears of the dependents it may see; the others are only counted, since a cause
 * carries whatever the new code printed in the dependent's run: it goes to the dependent's owner
 * and the debug log only (docs/security.md#dependents-you-cannot-see). A dependent that declares
 * secrets runs with its owner's (the run is its owner's stored test); whoever else caused the
 * re-test hears only whether it passed, since its output came from a run holding another agent's
 * values (docs/security.md#declaring-and-delivering). One its owner has not set is not a failure of
 * the dependent: nothing is recorded.
 */
export class DependentRetests {
  constructor(
    private readonly core: SkillCore,
    private readonly runs: SkillRuns,
  ) {}

  async after(dependency: SkillRecord, context: CallContext): Promise<RetestReport> {
    const { composition, logger, now } = this.core;
    const retests: DependentRetest[] = [];
    const hidden = { passed: 0, failed: 0 };
    for (const dependent of composition.unpinnedDependents(dependency.name)) {
      let outcome: DependentRetest;
      let ownersSecrets = false;
      try {
        const resolved = composition.resolve({ name: dependent.name }, undefined, "re-test");
        // The dependent's stored test runs as its owner would run it: a composition's steps are
        // resolved with the owner's view, not with that of whoever changed the dependency.
        const asOwner: CallContext =
          dependent.owner === context.caller.agentId
            ? context
            : { ...context, caller: { agentId: dependent.owner, admin: false, authenticated: context.caller.authenticated } };
        // Its stored test: the payload and the test files of the version that is re-tested (docs/files.md#test-files).
        const inputFiles = await this.core.testFiles(dependent.name, resolved.version);
        ownersSecrets = asOwner !== context && (await this.runs.secretsNeeded(resolved, asOwner.caller)).length > 0;
        const ran = await this.runs.run(resolved, { payload: dependent.testPayload, inputFiles, telemetry: false }, asOwner);
        outcome = { name: dependent.name, passed: ran.result.success, error: ran.result.errorSummary };
        composition.dependencies.recordRetest(dependent.name, dependency.name, dependency.version, outcome.passed, outcome.error, now());
      } catch (error) {
        // The dependent could not even start (e.g. another of its dependencies is gone): a failure too.
        outcome = { name: dependent.name, passed: false, error: errorMessage(error) };
        // Nor is a host the operator's policy no longer allows (docs/security.md#declaring-hosts).
        if (!(error instanceof RunCancelledError) && !(error instanceof SecretMissingError) && !(error instanceof EgressNotAllowedError)) {
          composition.dependencies.recordRetest(dependent.name, dependency.name, dependency.version, false, outcome.error, now());
        }
      }
      const shown =
        ownersSecrets && !outcome.passed
          ? { ...outcome, error: "its test failed; the cause goes to its owner (the run had its owner's secrets)" }
          : outcome;
      if (canSee(dependent, context.caller)) retests.push(shown);
      else if (outcome.passed) hidden.passed++;
      else hidden.failed++;
      const fields = {
        skill: dependent.name,
        dependency: dependency.name,
        version: dependency.version,
        passed: outcome.passed,
        requestId: context.requestId,
      };
      logger[outcome.passed ? "info" : "warn"](fields, "dependent re-tested against a new version of its dependency");
      // The cause is run output, like a payload: never above debug (docs/operations.md#logs).
      if (!outcome.passed) logger.debug({ ...fields, error: outcome.error }, "dependent's re-test failed");
    }
    return { dependentsRetested: retests, hiddenDependentsRetested: hidden };
  }
}
