import { anySignal } from "any-signal";
import { SkillEngineError, SkillModuleMissingError, SkillTestFailedError } from "../../errors/index.js";
import type { ExecutionResult, RunInputFile, SandboxFile } from "../../execution/index.js";
import { canSee } from "../access/index.js";
import type { CallContext } from "../call-context.js";
import type { DeclaredDependencies } from "../composition/index.js";
import { type DeclaredPackageNames, missingModuleCause, missingModuleOf } from "../intake/index.js";
import { isLive, type SkillAccess, type SkillRecord, type VersionOrigin, type VersionPackages } from "../registry/index.js";
import { contentHash, fromStoreError, locationOf, type PreparedFile, type StagedVersion } from "../store/index.js";
import type { SandboxRunInput, SkillCore } from "./skill-core.js";

/**
 * A new version's history file and active file, written and fsynced while its test runs, before
 * its number is known; the commit puts them in place, every other path discards them.
 */
export interface StagedFiles {
  readonly history: Promise<StagedVersion>;
  readonly active: Promise<PreparedFile>;
  /** Removes whatever was not put in place; idempotent. */
  discard(): Promise<void>;
}

/** What a folder skill's version writes beside the registry (its canonical folder, its source row). */
export interface VersionExtras {
  readonly before: (version: number) => Promise<void>;
  readonly discard: (version: number) => Promise<void>;
}

/** A version that passed its test run, ready to be numbered and committed. */
export interface NewVersion {
  readonly name: string;
  readonly code: string;
  readonly description: string;
  readonly parametersSchema: string;
  readonly testPayload: string;
  readonly origin: VersionOrigin;
  readonly access: SkillAccess;
  /** @default plain, no dependencies */
  readonly declared?: DeclaredDependencies;
  readonly extras?: VersionExtras;
  /** Files written ahead while the test ran (see {@link VersionGate.stage}). */
  readonly staged?: StagedFiles;
  /** What the version declared beyond the standard library (docs/packages.md); absent: nothing. */
  readonly packages?: VersionPackages | undefined;
  /** The files its test runs are handed, kept with it (docs/files.md#test-files). @default [] */
  readonly testFiles?: readonly RunInputFile[];
  /** The secret names it declares (docs/security.md#declaring-and-delivering). @default [] */
  readonly secrets?: readonly string[];
  /** The hosts it declares, canonical (docs/security.md#declaring-hosts). @default [] */
  readonly networkAllow?: readonly string[];
}

/** An early test run (see {@link VersionGate.startEarlyTest}): its code, its result, and how to cancel it. */
export interface EarlyTest {
  readonly code: string;
  readonly result: Promise<ExecutionResult>;
  discard(): void;
}

const NOTHING_DECLARED: DeclaredPackageNames = { requirements: [], systemPackages: [] };

/**
 * The error a failed test run answers: a {@link SkillModuleMissingError} naming the module and
 * where to declare it when the run failed on a missing module (docs/packages.md#missing-modules),
 * else a {@link SkillTestFailedError} with the run's one-line cause.
 */
export function testFailure(
  name: string,
  test: ExecutionResult,
  declared: DeclaredPackageNames = NOTHING_DECLARED,
  skillSeen: (name: string) => boolean = () => false,
): SkillTestFailedError {
  const module = missingModuleOf(test);
  if (module === undefined) return new SkillTestFailedError(name, test.errorSummary);
  const top = module.split(".")[0] ?? module;
  return new SkillModuleMissingError(name, module, missingModuleCause(module, declared, top !== name && skillSeen(top)));
}

/**
 * The gate every change of code goes through (docs/skill-lifecycle.md#registration): the test run
 * (the code must exit 0 and print something on its test payload), the staging of its files, and
 * the commit of version n+1. Registration, patching and folder skills all pass it.
 */
export class VersionGate {
  constructor(private readonly core: SkillCore) {}

  /**
   * Runs the TDD gate: the result, or a {@link SkillTestFailedError} with the run's one-line cause.
   * `declared`: the version's packages, which a missing module's cause takes into account.
   */
  async test(
    run: Omit<SandboxRunInput, "purpose">,
    context: CallContext,
    declared: DeclaredPackageNames = NOTHING_DECLARED,
  ): Promise<ExecutionResult> {
    return this.verdict(run.skillName, await this.core.runSandbox({ ...run, purpose: "test" }, context), context, declared);
  }

  /** A test run's verdict: the result, or a {@link SkillTestFailedError} with the run's one-line cause (see {@link testFailure}). */
  verdict(name: string, test: ExecutionResult, context: CallContext, declared: DeclaredPackageNames = NOTHING_DECLARED): ExecutionResult {
    if (!test.success) {
      this.core.logger.info(
        { skill: name, cause: test.errorSummary, agent: context.caller.agentId, requestId: context.requestId },
        "code rejected by its test run",
      );
      throw testFailure(name, test, declared, (module) => this.skillSeen(module, context));
    }
    return test;
  }

  /** Whether `module` names a live skill the caller may see: its missing module is a missing depends_on, never a package. */
  skillSeen(module: string, context: CallContext): boolean {
    const skill = this.core.registry.get(module);
    return skill !== undefined && isLive(skill.status) && canSee(skill, context.caller);
  }

  /**
   * A registration's test run started on the code as sent before intake's verdict (see
   * `CodeIntake.begin`); `discard` cancels it (its container is killed and removed like any
   * cancelled run's).
   */
  startEarlyTest(
    run: {
      readonly skillName: string;
      readonly code: string;
      readonly payload: string;
      readonly files: Promise<SandboxFile[]>;
      readonly inputFiles: readonly RunInputFile[];
      readonly secrets: readonly string[];
      readonly networkAllow: readonly string[];
    },
    context: CallContext,
  ): EarlyTest {
    const controller = new AbortController();
    const signal = anySignal([context.signal, controller.signal]);
    const result = run.files
      .then((files) =>
        this.core.runSandbox(
          {
            purpose: "test",
            skillName: run.skillName,
            code: run.code,
            payload: run.payload,
            files,
            inputFiles: run.inputFiles,
            secrets: run.secrets,
            networkAllow: run.networkAllow,
          },
          { ...context, signal },
        ),
      )
      .finally(() => signal.clear());
    result.catch(() => undefined); // observed by the registration, or discarded
    return { code: run.code, result, discard: () => controller.abort() };
  }

  /** Starts writing a new version's history and active files ahead of its number (see {@link StagedFiles}). */
  stage(name: string, code: string): StagedFiles {
    const history = this.core.store.stageVersion(name, code);
    const active = this.core.store.prepareActive(name, code);
    // Observed at the commit or by discard; never an unhandled rejection meanwhile.
    history.catch(() => undefined);
    active.catch(() => undefined);
    return {
      history,
      active,
      discard: async () => {
        await Promise.allSettled([history.then((file) => file.discard()), active.then((file) => file.discard())]);
      },
    };
  }

  /**
   * Writes version n+1 and makes it active. Call under the name's lock. A retired or deleted
   * skill's files come back to the active directory first, so its history stays in one place.
   */
  async commit(version: NewVersion): Promise<SkillRecord> {
    const { store, logger, now } = this.core;
    const { name } = version;
    const existing = this.core.registry.get(name);
    const from = existing && !isLive(existing.status) ? locationOf(existing.status) : undefined;
    if (from === undefined) return this.writeAndCommit(version);
    // Files staged for a live skill are not used for one whose files come back from elsewhere.
    await version.staged?.discard();
    await store.moveSkill(name, from, "active", now()).catch((error: unknown) => {
      throw fromStoreError(error, `bring the files of "${name}" back from ${from}`);
    });
    try {
      return await this.writeAndCommit({ ...version, staged: undefined });
    } catch (error) {
      // Nothing was committed: the files go back where the registry says they are.
      await store.moveSkill(name, "active", from, now()).catch((moveError: unknown) => {
        logger.error({ err: moveError, skill: name }, "could not move the files back; the next start's reconciliation does");
      });
      throw error;
    }
  }

  private async writeAndCommit(input: NewVersion): Promise<SkillRecord> {
    const { registry, store, composition, mirror, now } = this.core;
    const { name, code, staged, extras } = input;
    const declared = input.declared ?? { kind: "plain", dependsOn: [] };
    const version = registry.nextVersion(name);
    // History file and new active file are written in full before the registry commits; when any
    // step fails (a full or read-only disk, a locked registry) what was written is removed and the
    // skill stays as it was (docs/operations.md#full-disks-and-a-locked-registry).
    const action = `write version ${version} of "${name}"`;
    // The history file and the new active file do not depend on each other: written (and
    // fsynced) side by side, the caller waits for one disk flush instead of two
    // (docs/performance.md#registration).
    // The version's test files go beside its history file, written in full before the commit too.
    const [history, prepared, testFiles] = await Promise.allSettled([
      staged ? staged.history.then((file) => file.commitAs(version)) : store.writeVersion(name, version, code),
      staged ? staged.active : store.prepareActive(name, code),
      store.writeTestFiles(name, version, input.testFiles ?? []),
    ]);
    if (history.status === "rejected" || prepared.status === "rejected" || testFiles.status === "rejected") {
      if (prepared.status === "fulfilled") await prepared.value.discard();
      await staged?.discard();
      await store.discardUncommittedVersion(name, version);
      const failed = [history, prepared, testFiles].find((step) => step.status === "rejected") as PromiseRejectedResult;
      throw fromStoreError(failed.reason, action);
    }
    const active = prepared.value;
    const undo = async (): Promise<void> => {
      await active.discard();
      await store.discardUncommittedVersion(name, version);
    };
    // Before the version exists, so an acknowledged version never lacks its declaration. Its
    // failure (a full or read-only disk, a locked registry) leaves nothing behind either.
    await composition.record(name, version, declared).catch(async (error: unknown) => {
      await undo();
      throw error instanceof SkillEngineError ? error : fromStoreError(error, action);
    });
    if (extras) {
      await extras.before(version).catch(async (error: unknown) => {
        await extras.discard(version).catch(() => undefined);
        await undo();
        throw error instanceof SkillEngineError ? error : fromStoreError(error, action);
      });
    }
    let committed: SkillRecord;
    try {
      // A write too (a locked registry refuses it): inside, so its failure leaves nothing behind.
      composition.dependencies.clearRetests(name);
      committed = registry.commitVersion(
        {
          name,
          version,
          description: input.description,
          parametersSchema: input.parametersSchema,
          testPayload: input.testPayload,
          contentHash: contentHash(code),
          origin: input.origin,
          createdAt: now(),
          ...(input.packages ? { packages: input.packages } : {}),
          ...(testFiles.value.length > 0 ? { testFiles: testFiles.value } : {}),
          ...(input.secrets && input.secrets.length > 0 ? { secrets: input.secrets } : {}),
          ...(input.networkAllow && input.networkAllow.length > 0 ? { networkAllow: input.networkAllow } : {}),
        },
        { owner: input.access.owner, visibility: input.access.visibility },
      );
    } catch (error) {
      await active.discard();
      await extras?.discard(version).catch(() => undefined);
      await store.discardUncommittedVersion(name, version);
      throw error;
    }
    // The active file's rename is visible at once; the fsync of its directory comes with the
    // mirror's rewrite of the same directory just after the reply. The mirror is a copy of the
    // registry for rebuilding it, rewritten at every start too; a crash before either is on disk
    // leaves the registry ahead of them, which start-up repairs from the history
    // (docs/performance.md#what-a-crash-can-lose).
    try {
      active.commitNow();
    } catch (error) {
      this.activeFileNotPlaced(error, name);
    }
    mirror.flushAfterReply();
    return committed;
  }

  /**
   * Puts a prepared active file in place after the registry committed. A rename needs no new
   * space, so this fails only if the directory itself went away or read-only; the registry is then
   * ahead of the file, which the next read restores from the history.
   */
  async place(active: PreparedFile, name: string): Promise<void> {
    await active.commit().catch((error: unknown) => this.activeFileNotPlaced(error, name));
  }

  private activeFileNotPlaced(error: unknown, name: string): void {
    this.core.logger.error({ err: error, skill: name }, "could not put the active file in place; the next read restores it from history");
  }
}
