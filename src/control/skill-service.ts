import { anySignal } from "any-signal";
import type { Logger } from "pino";
import {
  AlreadyExistsError,
  ConflictError,
  errorMessage,
  FailedPreconditionError,
  InternalError,
  InvalidArgumentError,
  RunCancelledError,
  SkillEngineError,
  SkillNotFoundError,
  SkillTestFailedError,
  SkillVersionNotFoundError,
} from "../errors/index.js";
import type { ExecutionResult, SandboxFile, SandboxFolderFile, SandboxRunner, SandboxRunRequest } from "../execution/index.js";
import { agentIdProblem, type Caller } from "../identity/index.js";
import {
  canManage,
  canSee,
  dependentCount,
  dependentsInView,
  describeDependents,
  disabledError,
  notYoursError,
  pinnedVersionFor,
  requireAdmin,
  SkillSharing,
} from "./access/index.js";
import {
  type CatalogEntry,
  type Composition,
  type DeclaredDependencies,
  type CompositionDefinition,
  definitionFromInput,
  type DependencyReport,
  isDefinitionText,
  parseCompositionPayload,
  parseStoredDefinition,
  type ResolvedSkill,
  runComposition,
  serializeDefinition,
  type SkillKind,
  type SkillRef,
  StepPayloadError,
  type StepInput,
  type StepOutcome,
} from "./composition/index.js";
import {
  type CodeIntake,
  compileParametersSchema,
  type IntakeWarning,
  type PayloadValidator,
  type PreparedCode,
  type RegistrationInput,
  type ValidRegistration,
  validateRegistration,
  validateSkillName,
} from "./intake/index.js";
import type { DuplicateScreen, OnDuplicate, SimilarSkillReport, SkillText } from "./duplicate-screen.js";
import { KeyedMutex } from "./keyed-mutex.js";
import {
  type DailyOutcome,
  type HealthPolicy,
  isLive,
  quantile,
  retirementReasons,
  type SkillAccess,
  type SkillRecord,
  type SkillRegistry,
  type SkillVisibility,
  type SourceWindow,
  type VersionOrigin,
  type VersionRecord,
  windowRate,
} from "./registry/index.js";
import type { SkillIndexer } from "./skill-indexer.js";
import {
  type CanonicalStore,
  contentHash,
  fromStoreError,
  locationOf,
  type MirrorWriter,
  type PreparedFile,
  type StagedVersion,
} from "./store/index.js";

/** Who is calling and how long they will wait; travels from the RPC down to the container. */
export interface CallContext {
  readonly caller: Caller;
  /** Correlates the service's log lines of one call (and the client's, via x-request-id). */
  readonly requestId?: string;
  readonly signal?: AbortSignal;
  /** The caller's idempotency key for an invocation (docs/execution-hosts.md#at-most-once). */
  readonly idempotencyKey?: string;
}

/** What an idempotency key may be: printable ASCII, short enough for a log line. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;

/** The outcome of a gated change of code (registration or patch). */
export interface RegistrationResult {
  readonly skill: SkillRecord;
  readonly test: ExecutionResult;
  readonly normalizations: string[];
  readonly warnings: IntakeWarning[];
  /** Unpinned dependents the caller may see, re-tested against the new version (docs/composition.md#re-tests). */
  readonly dependentsRetested?: DependentRetest[];
  /** The re-tested dependents the caller may not see: counted, never named (docs/security.md#dependents-you-cannot-see). */
  readonly hiddenDependentsRetested?: HiddenRetests;
  /** Skills the caller can see that resemble this one (docs/learning.md#near-duplicates). */
  readonly similarSkills?: SimilarSkillReport[];
}

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

export interface InvocationResult {
  readonly result: ExecutionResult;
  readonly version: number;
  /** A composed skill's steps; empty for a plain skill. */
  readonly steps: StepOutcome[];
  /** Dependency warnings the caller must see. */
  readonly warnings: string[];
  /** Names the invocation for RecordSkillOutcome; empty when it could not be recorded. */
  readonly invocationId?: string;
}

export interface SkillWithCode {
  readonly skill: SkillRecord;
  /** Python source, or a composed skill's definition (JSON). */
  readonly code: string;
  readonly kind: SkillKind;
  readonly dependsOn: readonly string[];
  /** Set for a skill kept as a folder (docs/skill-sources.md). */
  readonly folder?: { readonly kind: "directory" | "instructions"; readonly skillId: string } | undefined;
}

/** RegisterComposedSkill's input. */
export interface ComposedRegistrationInput {
  readonly name: string;
  readonly description: string;
  readonly parametersSchema: string;
  readonly steps: readonly StepInput[];
  readonly output: string;
  readonly testPayload: string;
}

export interface ComposedRegistrationResult {
  readonly skill: SkillRecord;
  readonly test: ExecutionResult;
  readonly steps: StepOutcome[];
  /** Composed skills retired with reason "evicted" to keep the per-agent limit. */
  readonly evicted: string[];
  readonly similarSkills?: SimilarSkillReport[];
}

export interface PatchInput {
  readonly name: string;
  readonly find: string;
  readonly replace: string;
  /** Empty reuses the active version's test payload. */
  readonly testPayload: string;
}

/** The scorer features of docs/skill-lifecycle.md#stats plus duration percentiles. */
export interface SkillStats {
  readonly skill: SkillRecord;
  readonly ageDays: number;
  readonly successRate: number | undefined;
  readonly invocationVelocity7d: number;
  readonly p50DurationMs: number;
  readonly p95DurationMs: number;
  readonly windowSamples: number;
  readonly windowSuccesses: number;
  readonly totalInvocations: number;
  readonly totalSuccesses: number;
  /** Seed 001's quality counters (docs/skill-sources.md#quality-counters), where routing keeps them. */
  readonly quality?: { selections: number; applied: number; completions: number; fallbacks: number } | undefined;
  /** The window's samples by source (docs/learning.md#outcomes). */
  readonly bySource?: readonly SourceWindow[];
}

/** Every kind a skill can be: declared (plain, composed) or from a folder (directory, instructions). */
export type LibraryKind = SkillKind | "directory" | "instructions";

/** A skill's health over time (docs/console.md#health-timeline). */
export interface HealthTimeline {
  readonly skill: SkillRecord;
  /** Midnight UTC of the first day covered. */
  readonly since: Date;
  readonly days: DailyOutcome[];
  readonly versions: VersionRecord[];
  readonly durations: ReadonlyArray<{ version: number; samples: number; p50Ms: number; p95Ms: number; p99Ms: number }>;
}

/** What RebuildIndexes did. */
export interface RebuildIndexesReport {
  readonly skillsIndexed: number;
  /** Canonical files rewritten from history, and skills that could not be repaired. */
  readonly repairs: string[];
}

export interface RetiredSkill {
  readonly name: string;
  readonly reasons: string[];
}

export interface SkillServiceDependencies {
  readonly registry: SkillRegistry;
  readonly store: CanonicalStore;
  readonly runner: SandboxRunner;
  readonly mirror: MirrorWriter;
  readonly intake: CodeIntake;
  readonly policy: HealthPolicy;
  readonly logger: Logger;
  /** Composed skills and dependencies (docs/composition.md). */
  readonly composition: Composition;
  /** Keeps routing's indexes in step; omitted where routing is not wired (some tests). */
  readonly indexer?: SkillIndexer;
  /** Near-duplicates at the door (docs/learning.md#near-duplicates); omitted: none are looked for. */
  readonly duplicates?: DuplicateScreen;
  readonly now?: () => Date;
  /** Folder skills (docs/skill-sources.md); omitted where no skill sources are wired. */
  readonly folders?: FolderSkillRuns;
}

/**
 * What running a folder skill needs (docs/skill-sources.md#running), from the skill sources;
 * undefined for a skill that is not kept as a folder.
 */
export interface FolderSkillRuns {
  runOf(
    name: string,
    version: number,
  ): Promise<
    | { readonly kind: "executable"; readonly launcher: string; readonly folder: SandboxFolderFile[] }
    | { readonly kind: "instructions" }
    | undefined
  >;
  /** True when `name` is kept as a folder (its versions come from its folder, not from RegisterSkill). */
  isFolderSkill(name: string): boolean;
  /** A folder skill's kind and id, for its active version; undefined for other skills. */
  header(record: SkillRecord): { readonly kind: "directory" | "instructions"; readonly skillId: string } | undefined;
}

/** A version of a folder skill to register (docs/skill-sources.md#registration). */
export interface FolderSkillInput {
  readonly name: string;
  readonly description: string;
  readonly parametersSchema: string;
  /** The entrypoint's source (executable), or the SKILL.md text (instructions). */
  readonly code: string;
  readonly testPayload: string;
  /** Set for an executable folder: the launcher and the folder's files the TDD gate runs. */
  readonly run?: { readonly launcher: string; readonly folder: readonly SandboxFolderFile[] };
  readonly access: SkillAccess;
  /** Writes what belongs to the version (its canonical folder, its source row) before the registry commits it. */
  readonly beforeCommit: (version: number) => Promise<void>;
  /** Undoes `beforeCommit` when the commit fails. */
  readonly discard: (version: number) => Promise<void>;
  /**
   * What a near-duplicate does: a discovered folder cannot be refused back to its author, so it
   * only warns (the default); an imported bundle takes its caller's choice.
   * @default "warn"
   */
  readonly onDuplicate?: OnDuplicate;
}

/**
 * A new version's history file and active file, written and fsynced while its test runs, before
 * its number is known; the commit puts them in place, every other path discards them.
 */
interface StagedFiles {
  readonly history: Promise<StagedVersion>;
  readonly active: Promise<PreparedFile>;
  /** Removes whatever was not put in place; idempotent. */
  discard(): Promise<void>;
}

/** Example queries a registration may carry for routing. */
export const EXAMPLE_QUERY_LIMITS = { count: 20, chars: 500 } as const;

const DAY_MS = 24 * 60 * 60 * 1000;
/** Invocations per version behind the timeline's duration percentiles. */
const TIMELINE_DURATIONS = 100;

/**
 * The control plane's use cases. Every change of code goes through the same gate (validate →
 * intake → test run → commit); every change of a skill is serialized per name; the registry
 * commits first and the files follow, which is the order start-up reconciliation relies on.
 */
export class SkillService {
  private readonly perName = new KeyedMutex();
  private readonly validators = new Map<string, { key: string; validate: PayloadValidator }>();
  private readonly registry: SkillRegistry;
  private readonly store: CanonicalStore;
  private readonly runner: SandboxRunner;
  private readonly mirror: MirrorWriter;
  private readonly intake: CodeIntake;
  private readonly policy: HealthPolicy;
  private readonly logger: Logger;
  private readonly indexer: SkillIndexer | undefined;
  private readonly now: () => Date;
  private readonly composition: Composition;
  private readonly folders: FolderSkillRuns | undefined;
  /** Grants, revocations and the on/off switch (docs/security.md#grants-and-visibility). */
  readonly sharing: SkillSharing;
  private readonly duplicates: DuplicateScreen | undefined;

  constructor(deps: SkillServiceDependencies) {
    this.folders = deps.folders;
    this.composition = deps.composition;
    this.duplicates = deps.duplicates;
    this.indexer = deps.indexer;
    this.registry = deps.registry;
    this.store = deps.store;
    this.runner = deps.runner;
    this.mirror = deps.mirror;
    this.intake = deps.intake;
    this.policy = deps.policy;
    this.logger = deps.logger;
    this.now = deps.now ?? (() => new Date());
    this.sharing = new SkillSharing({
      registry: this.registry,
      logger: this.logger,
      now: this.now,
      lock: (name, work) => this.perName.run(name, work),
      changed: async (skill) => {
        await this.mirror.flushOrLater();
        await this.reindex(skill);
      },
    });
  }

  /**
   * Registers a skill, or a new version of one the caller may change. `visibility` undefined:
   * private for a new skill, unchanged for an existing one.
   */
  async register(
    input: RegistrationInput,
    context: CallContext,
    exampleQueries: readonly string[] = [],
    visibility?: SkillVisibility,
    dependsOn: readonly string[] = [],
    system = false,
    options: { readonly onDuplicate?: OnDuplicate } = {},
  ): Promise<RegistrationResult> {
    // A system skill is an operator's decision (docs/security.md#system-skills).
    if (system) requireAdmin(context.caller, "registering a system skill");
    const valid = validateRegistration(input);
    if (isDefinitionText(valid.code)) {
      throw new InvalidArgumentError("code", "is a composed skill's definition; register it with RegisterComposedSkill");
    }
    // Checked before the test run so a taken name costs no sandbox run; checked again under the
    // lock because the name may be taken meanwhile.
    const existing = this.registry.get(valid.name);
    this.accessForRegistration(valid.name, context.caller, visibility, existing);
    this.refuseKindChange(valid.name, "plain", existing);
    // The near-duplicate screen's model run (the description's embedding) is the slowest step of
    // a registration: it starts first, beside intake and the test run (docs/performance.md#registration).
    this.duplicates?.anticipate?.(valid.description);
    checkExampleQueries(exampleQueries);
    const declared = this.composition.preflightPlain(valid.name, dependsOn, context.caller);
    const loadingFiles = this.composition.dependencyFiles(valid.name, declared);
    loadingFiles.catch(() => undefined); // awaited below, after intake's verdict
    const onDuplicate = options.onDuplicate ?? "warn";
    const intake = this.intake.begin(valid.code);
    // Code the guard passes as sent starts its test run while the parser checks it; "reject"
    // screens before any run, so a refused near-duplicate costs none (docs/performance.md#registration).
    const early =
      intake.runnableAsSent && onDuplicate === "warn"
        ? this.startEarlyTest(valid.name, valid.code, valid, loadingFiles, context)
        : undefined;
    let prepared: PreparedCode;
    try {
      prepared = await intake.prepared;
    } catch (error) {
      early?.discard();
      throw error;
    }
    const testPayload = valid.validatePayload("test_payload", valid.testPayload);
    // "reject" screens here, before any run; "warn" screens while the test runs (below).
    const screened = { name: valid.name, description: valid.description, code: prepared.code };
    const rejectScreened = onDuplicate === "reject" ? await this.screenDuplicates(screened, context, "reject") : undefined;
    const files = await loadingFiles;
    // The early run is kept when normalization left the code as sent (the usual case); otherwise
    // the code that passed intake is what runs. The run starts before the screen and the staging,
    // so that what they do before their first await overlaps the sandbox's work.
    let run: Promise<ExecutionResult>;
    if (early && prepared.code === early.code) run = early.result;
    else {
      early?.discard();
      run = this.run("test", valid.name, prepared.code, testPayload, context, files);
    }
    const testing = run.then((result) => this.testVerdict(valid.name, result, context));
    const screening = rejectScreened ? Promise.resolve(rejectScreened) : this.screenDuplicates(screened, context, "warn");
    screening.catch(() => undefined); // observed below; a failed test run must not leave it unhandled
    // The new version's files are written (and fsynced) while its test runs; a failed test
    // discards them (docs/performance.md#registration).
    const staged = this.stageFiles(valid.name, prepared.code);
    let test: ExecutionResult;
    try {
      test = await testing;
    } catch (error) {
      await staged.discard();
      throw error;
    }
    // The test ran outside the lock so registrations of one name can test in parallel;
    // numbering and writes are serialized.
    const skill = await this.perName
      .run(valid.name, () =>
        this.commitNewVersion(
          valid.name,
          prepared.code,
          valid.description,
          valid.parametersSchema,
          testPayload,
          "register",
          this.accessForRegistration(valid.name, context.caller, visibility),
          { kind: "plain", dependsOn: declared },
          undefined,
          staged,
        ).then((committed) => (system && !committed.system ? this.registry.setSystem(committed.name, true, this.now()) : committed)),
      )
      .catch(async (error: unknown) => {
        // Whatever was not put in place is removed (a file already renamed is not touched).
        await staged.discard();
        throw error;
      });
    // A "warn" screen decides nothing, so the commit did not wait for it; the answer does. The
    // version is committed by now: a screen that failed is logged and reports nothing.
    const similarSkills = await screening.catch((error: unknown) => {
      this.logger.error({ err: error, skill: skill.name }, "could not look for near-duplicates; registered without");
      return [];
    });
    if (system) await this.mirror.flushOrLater();
    await this.reindex(skill, exampleQueries);
    const { dependentsRetested, hiddenDependentsRetested } = await this.retestDependents(skill, context);
    this.logger.info(
      {
        skill: skill.name,
        version: skill.version,
        owner: skill.owner,
        visibility: skill.visibility,
        agent: context.caller.agentId,
        requestId: context.requestId,
      },
      "skill registered",
    );
    return {
      skill,
      test,
      normalizations: [...valid.normalizations, ...prepared.normalizations],
      warnings: prepared.warnings,
      dependentsRetested,
      hiddenDependentsRetested,
      similarSkills,
    };
  }

  /**
   * Registers a composed skill, or a new version of one (docs/composition.md): the pre-flight,
   * then the TDD gate (the whole composition on `test_payload`), then the commit; a new composed
   * skill past the per-agent limit evicts the least used one.
   */
  async registerComposed(
    input: ComposedRegistrationInput,
    context: CallContext,
    exampleQueries: readonly string[] = [],
    visibility?: SkillVisibility,
    options: { readonly onDuplicate?: OnDuplicate } = {},
  ): Promise<ComposedRegistrationResult> {
    const definition = definitionFromInput(input.steps, input.output);
    const code = serializeDefinition(definition);
    const valid = validateRegistration({ ...input, code });
    this.accessForRegistration(valid.name, context.caller, visibility);
    this.refuseKindChange(valid.name, "composed");
    checkExampleQueries(exampleQueries);
    const dependsOn = this.composition.preflightComposed(valid.name, definition, valid.parametersSchema, context.caller);
    const testPayload = valid.validatePayload("test_payload", valid.testPayload);
    const similarSkills = await this.screenDuplicates(
      { name: valid.name, description: valid.description, code },
      context,
      options.onDuplicate ?? "warn",
    );
    const test = await this.runComposed(valid.name, definition, testPayload, context, 1, false);
    if (!test.result.success) {
      this.logger.info(
        { skill: valid.name, cause: test.result.errorSummary, requestId: context.requestId },
        "composition rejected by its test run",
      );
      throw new SkillTestFailedError(valid.name, test.result.errorSummary);
    }
    const skill = await this.perName.run(valid.name, () =>
      this.commitNewVersion(
        valid.name,
        code,
        valid.description,
        valid.parametersSchema,
        testPayload,
        "register",
        this.accessForRegistration(valid.name, context.caller, visibility),
        { kind: "composed", dependsOn },
      ),
    );
    await this.reindex(skill, exampleQueries);
    const evicted = await this.evictComposed(skill, context);
    this.logger.info(
      {
        skill: skill.name,
        version: skill.version,
        steps: definition.steps.length,
        evicted,
        agent: context.caller.agentId,
        requestId: context.requestId,
      },
      "composed skill registered",
    );
    return { skill, test: test.result, steps: test.steps, evicted, similarSkills };
  }

  /** Retires (reason "evicted") the owner's least used composed skills past the limit (docs/composition.md#eviction). */
  private async evictComposed(kept: SkillRecord, context: CallContext): Promise<string[]> {
    const evicted: string[] = [];
    for (const victim of this.composition.evictionVictims(kept.owner, kept.name, this.now())) {
      await this.perName.run(victim.name, async () => {
        const current = this.registry.get(victim.name);
        if (!current || !isLive(current.status)) return;
        const reason = `evicted: ${kept.owner} keeps at most ${this.composition.settings.composedSkillsPerAgent} composed skills and this one was the least used`;
        const retired = this.registry.setStatus(current.name, "retired", reason, this.now());
        await this.store.moveSkill(current.name, locationOf(current.status), "retired", this.now());
        await this.reindex(retired);
        evicted.push(current.name);
        this.logger.warn(
          { skill: current.name, for: kept.name, agent: context.caller.agentId, requestId: context.requestId },
          "composed skill evicted",
        );
      });
    }
    if (evicted.length > 0) await this.mirror.flushOrLater();
    return evicted;
  }

  /** A name keeps its kind: a plain skill's name cannot become a composition's, nor the reverse. */
  private refuseKindChange(name: string, kind: SkillKind, existing = this.registry.get(name)): void {
    if (!existing) return;
    this.refuseFolderSkill(name, "register");
    const current = this.composition.declaredOf(existing).kind;
    if (current !== kind) {
      throw new FailedPreconditionError(
        `"${name}" is a ${current} skill and a name keeps its kind: register the ${kind} skill under another name`,
      );
    }
  }

  /** A folder skill's versions come from its folder (docs/skill-sources.md#registration), never from an RPC that writes code. */
  private refuseFolderSkill(name: string, action: string): void {
    if (this.folders?.isFolderSkill(name)) {
      throw new FailedPreconditionError(
        `cannot ${action} "${name}": it is kept as a skill folder; edit its folder (or import a new bundle)`,
      );
    }
  }

  /**
   * Registers a version of a folder skill (docs/skill-sources.md#registration): an executable
   * folder passes the same TDD gate as every skill (its launcher run with the folder beside it);
   * an instructions-only folder has nothing to run. Committed like any version; owner and
   * visibility are `access`.
   */
  async registerFolderSkill(
    input: FolderSkillInput,
    context: CallContext,
  ): Promise<{ skill: SkillRecord; test: ExecutionResult | undefined; similarSkills: SimilarSkillReport[] }> {
    const valid = validateRegistration(input);
    const existing = this.registry.get(valid.name);
    if (existing && !this.folders?.isFolderSkill(valid.name)) {
      throw new AlreadyExistsError(`the name "${valid.name}" is taken by a skill that is not kept as a folder`);
    }
    const testPayload = valid.validatePayload("test_payload", valid.testPayload);
    // Folders and bundles are screened too: a folder only warns (the log and the near-duplicate
    // metric say so), an import may be refused before its test runs.
    const similarSkills = await this.screenDuplicates(
      { name: valid.name, description: valid.description, code: valid.code },
      context,
      input.onDuplicate ?? "warn",
    );
    const near = similarSkills.filter((s) => s.nearDuplicate).map((s) => s.name);
    if (near.length > 0) this.logger.warn({ skill: valid.name, nearDuplicates: near }, "folder skill is a near-duplicate");
    let test: ExecutionResult | undefined;
    if (input.run) {
      test = await this.run("test", valid.name, input.run.launcher, testPayload, context, [], input.run.folder);
      if (!test.success) {
        this.logger.info({ skill: valid.name, cause: test.errorSummary }, "skill folder rejected by its test run");
        throw new SkillTestFailedError(valid.name, test.errorSummary);
      }
    }
    const skill = await this.perName.run(valid.name, () =>
      this.commitNewVersion(
        valid.name,
        valid.code,
        valid.description,
        valid.parametersSchema,
        testPayload,
        "register",
        input.access,
        { kind: "plain", dependsOn: [] },
        { before: input.beforeCommit, discard: input.discard },
      ),
    );
    await this.reindex(skill);
    this.logger.info({ skill: skill.name, version: skill.version, requestId: context.requestId }, "folder skill registered");
    return { skill, test, similarSkills };
  }

  /** Retires a folder skill whose folder is gone (docs/skill-sources.md#hot-reload); a no-op unless it is live. */
  async retireFolderSkill(name: string, reason: string): Promise<SkillRecord | undefined> {
    return this.perName.run(name, async () => {
      const current = this.registry.get(name);
      if (!current || !isLive(current.status)) return undefined;
      const retired = await this.takeOut(current, "retired", reason);
      this.logger.warn({ skill: name, reason }, "folder skill retired");
      return retired;
    });
  }

  /**
   * Re-runs the stored tests of the live skills that depend on `dependency` unpinned, against its
   * new active version (docs/composition.md#re-tests). A failure marks the dependent with a warning
   * its viewers see. The caller hears of the dependents it may see; the others are only counted,
   * since a cause carries whatever the new code printed in the dependent's run: it goes to the
   * dependent's owner and the debug log only (docs/security.md#dependents-you-cannot-see).
   */
  private async retestDependents(
    dependency: SkillRecord,
    context: CallContext,
  ): Promise<{ dependentsRetested: DependentRetest[]; hiddenDependentsRetested: HiddenRetests }> {
    const retests: DependentRetest[] = [];
    const hidden = { passed: 0, failed: 0 };
    for (const dependent of this.composition.unpinnedDependents(dependency.name)) {
      let outcome: DependentRetest;
      try {
        const resolved = this.composition.resolve({ name: dependent.name }, undefined, "re-test");
        // The dependent's stored test runs as its owner would run it: a composition's steps are
        // resolved with the owner's view, not with that of whoever changed the dependency.
        const asOwner: CallContext =
          dependent.owner === context.caller.agentId
            ? context
            : { ...context, caller: { agentId: dependent.owner, admin: false, authenticated: context.caller.authenticated } };
        const ran = await this.execute(resolved, dependent.testPayload, asOwner, 1, false);
        outcome = { name: dependent.name, passed: ran.result.success, error: ran.result.errorSummary };
        this.composition.dependencies.recordRetest(
          dependent.name,
          dependency.name,
          dependency.version,
          outcome.passed,
          outcome.error,
          this.now(),
        );
      } catch (error) {
        // The dependent could not even start (e.g. another of its dependencies is gone): a failure too.
        outcome = { name: dependent.name, passed: false, error: errorMessage(error) };
        if (!(error instanceof RunCancelledError)) {
          this.composition.dependencies.recordRetest(dependent.name, dependency.name, dependency.version, false, outcome.error, this.now());
        }
      }
      if (canSee(dependent, context.caller)) retests.push(outcome);
      else if (outcome.passed) hidden.passed++;
      else hidden.failed++;
      const fields = {
        skill: dependent.name,
        dependency: dependency.name,
        version: dependency.version,
        passed: outcome.passed,
        requestId: context.requestId,
      };
      this.logger[outcome.passed ? "info" : "warn"](fields, "dependent re-tested against a new version of its dependency");
      // The cause is run output, like a payload: never above debug (docs/operations.md#logs).
      if (!outcome.passed) this.logger.debug({ ...fields, error: outcome.error }, "dependent's re-test failed");
    }
    return { dependentsRetested: retests, hiddenDependentsRetested: hidden };
  }

  async patch(input: PatchInput, context: CallContext): Promise<RegistrationResult> {
    const skill = this.liveSkill(this.manageableSkill(input.name, context.caller, "patch"), "patch");
    this.refuseFolderSkill(skill.name, "patch");
    const declared = this.composition.declaredOf(skill);
    if (declared.kind === "composed") {
      throw new FailedPreconditionError(`"${skill.name}" is a composed skill: replace its definition with RegisterComposedSkill`);
    }
    if (input.find === "") throw new InvalidArgumentError("find", "is required: the exact text to replace");
    const current = await this.activeCode(skill);
    const occurrences = current.split(input.find).length - 1;
    if (occurrences === 0) {
      throw new InvalidArgumentError("find", `does not occur in the active code of "${skill.name}" (v${skill.version})`);
    }
    if (occurrences > 1) {
      throw new InvalidArgumentError("find", `occurs ${occurrences} times in the active code; include more context so it is unique`);
    }
    const at = current.indexOf(input.find);
    const patched = current.slice(0, at) + input.replace + current.slice(at + input.find.length);
    const validate = this.payloadValidatorFor(skill);
    const testPayload = validate("test_payload", input.testPayload.trim() === "" ? skill.testPayload : input.testPayload);
    const prepared = await this.intake.prepare(patched);
    const files = await this.composition.dependencyFiles(skill.name, declared.dependsOn);
    const test = await this.testRun(skill.name, prepared.code, testPayload, context, files);
    const committed = await this.perName.run(skill.name, async () => {
      const latest = this.registry.get(skill.name);
      if (!latest || latest.version !== skill.version || !isLive(latest.status)) {
        throw new ConflictError(
          `"${skill.name}" changed while the patch was being tested (v${skill.version} → v${latest?.version ?? "?"}); read it again and retry`,
        );
      }
      return this.commitNewVersion(
        skill.name,
        prepared.code,
        skill.description,
        skill.parametersSchema,
        testPayload,
        "patch",
        latest,
        declared,
      );
    });
    await this.reindex(committed);
    const { dependentsRetested, hiddenDependentsRetested } = await this.retestDependents(committed, context);
    this.logger.info(
      { skill: committed.name, version: committed.version, agent: context.caller.agentId, requestId: context.requestId },
      "skill patched",
    );
    return {
      skill: committed,
      test,
      normalizations: prepared.normalizations,
      warnings: prepared.warnings,
      dependentsRetested,
      hiddenDependentsRetested,
    };
  }

  async rollback(name: string, version: number, context: CallContext): Promise<SkillRecord> {
    validateSkillName(name);
    if (!Number.isInteger(version) || version < 1) throw new InvalidArgumentError("version", "must be a version number ≥ 1");
    return this.perName.run(name, async () => {
      const skill = this.liveSkill(this.manageableSkill(name, context.caller, "roll back"), "roll back");
      if (skill.version === version) throw new FailedPreconditionError(`"${name}" is already at version ${version}`);
      const target = this.registry.version(name, version);
      if (!target) throw new SkillVersionNotFoundError(name, version, skill.latestVersion);
      const code = await this.store.readVersion(name, version);
      if (code === undefined || contentHash(code) !== target.contentHash) {
        throw new InternalError(`the history file of "${name}" v${version} is missing or altered`);
      }
      // Everything that can run out of space is written before the registry commits; a failure
      // at any step leaves the skill as it was (docs/operations.md#full-disks-and-a-locked-registry).
      const active = await this.store.prepareActive(name, code).catch((error: unknown) => {
        throw fromStoreError(error, `roll "${name}" back to v${version}`);
      });
      let rolledBack: SkillRecord;
      try {
        rolledBack = this.registry.activateVersion(name, version, this.now());
      } catch (error) {
        await active.discard();
        throw error;
      }
      await this.commitPrepared(active, name);
      await this.mirror.flushOrLater();
      await this.reindex(rolledBack);
      this.logger.info(
        { skill: name, from: skill.version, to: version, agent: context.caller.agentId, requestId: context.requestId },
        "skill rolled back",
      );
      return rolledBack;
    });
  }

  async delete(name: string, context: CallContext, force = false): Promise<SkillRecord> {
    validateSkillName(name);
    return this.perName.run(name, async () => {
      const skill = this.manageableSkill(name, context.caller, "delete");
      if (skill.status === "deleted") throw new FailedPreconditionError(`"${name}" is already deleted`);
      this.protectDependents(name, "delete", force, context);
      const deleted = await this.takeOut(skill, "deleted", `deleted by ${context.caller.agentId}`);
      this.logger.info({ skill: name, agent: context.caller.agentId, requestId: context.requestId }, "skill deleted (soft)");
      return deleted;
    });
  }

  async restore(name: string, context: CallContext): Promise<SkillRecord> {
    validateSkillName(name);
    return this.perName.run(name, async () => {
      const skill = this.manageableSkill(name, context.caller, "restore");
      if (isLive(skill.status)) {
        throw new FailedPreconditionError(`"${name}" is ${skill.status}, not retired or deleted: nothing to restore`);
      }
      const restored = this.registry.restore(name, `restored by ${context.caller.agentId}`, this.now());
      await this.store.moveSkill(name, locationOf(skill.status), "active", this.now());
      await this.mirror.flushOrLater();
      await this.reindex(restored);
      this.logger.info({ skill: name, from: skill.status, agent: context.caller.agentId, requestId: context.requestId }, "skill restored");
      return restored;
    });
  }

  async setProtected(name: string, pinned: boolean, context: CallContext): Promise<SkillRecord> {
    validateSkillName(name);
    return this.perName.run(name, async () => {
      this.manageableSkill(name, context.caller, pinned ? "protect" : "unprotect");
      const updated = this.registry.setProtected(name, pinned, this.now());
      await this.mirror.flushOrLater();
      await this.reindex(updated);
      return updated;
    });
  }

  /** Makes a skill private or public; its owner's or an admin's call. */
  async setVisibility(name: string, visibility: SkillVisibility, context: CallContext): Promise<SkillRecord> {
    validateSkillName(name);
    return this.perName.run(name, async () => {
      const skill = this.manageableSkill(name, context.caller, "change the visibility of");
      if (skill.visibility === visibility) return skill;
      const updated = this.registry.setAccess(name, { owner: skill.owner, visibility }, this.now());
      await this.mirror.flushOrLater();
      await this.reindex(updated);
      this.logger.info(
        { skill: name, from: skill.visibility, to: visibility, agent: context.caller.agentId, requestId: context.requestId },
        "skill visibility changed",
      );
      return updated;
    });
  }

  /** Gives a skill to another agent (admins only), e.g. the local agent's skills once tokens exist. */
  async transfer(name: string, newOwner: string, context: CallContext): Promise<SkillRecord> {
    requireAdmin(context.caller, "TransferSkill");
    validateSkillName(name);
    const ownerProblem = agentIdProblem(newOwner);
    if (ownerProblem) throw new InvalidArgumentError("new_owner", ownerProblem);
    return this.perName.run(name, async () => {
      const skill = this.existingSkill(name);
      if (skill.owner === newOwner) return skill;
      const updated = this.registry.setAccess(name, { owner: newOwner, visibility: skill.visibility }, this.now());
      await this.mirror.flushOrLater();
      await this.reindex(updated);
      this.logger.warn(
        { skill: name, from: skill.owner, to: newOwner, agent: context.caller.agentId, requestId: context.requestId },
        "skill transferred",
      );
      return updated;
    });
  }

  /**
   * Operator repair without a restart: every skill's canonical file checked against the registry
   * (rewritten from history when missing or altered), the mirror rewritten, routing re-indexed.
   * Each skill is checked under its own lock, so calls keep being served meanwhile.
   */
  async rebuildIndexes(context: CallContext): Promise<RebuildIndexesReport> {
    requireAdmin(context.caller, "RebuildIndexes");
    const repairs: string[] = [];
    for (const { name } of this.registry.list({ includeInactive: true })) {
      await this.perName.run(name, async () => {
        const skill = this.registry.get(name);
        if (!skill) return;
        try {
          const { restored } = await this.readActiveCode(skill);
          if (restored) repairs.push(`${name}: canonical file rewritten from v${skill.version} in its history`);
        } catch (error) {
          repairs.push(`${name}: ${errorMessage(error)}`);
        }
      });
    }
    await this.mirror.flushOrLater();
    const skillsIndexed = this.indexer ? await this.indexer.reindexAll() : 0;
    this.logger.warn({ skillsIndexed, repairs, agent: context.caller.agentId, requestId: context.requestId }, "indexes rebuilt by request");
    return { skillsIndexed, repairs };
  }

  /** The retirement sweep (docs/skill-lifecycle.md#retirement-rule) over the skills the caller manages (all of them for admins); `dryRun` only reports. */
  async retireDegraded(dryRun: boolean, context: CallContext, force = false, kept: RetiredSkill[] = []): Promise<RetiredSkill[]> {
    const retired: RetiredSkill[] = [];
    // A system skill is retired by admins only (docs/security.md#system-skills).
    const candidates = this.registry
      .list(context.caller.admin ? {} : { owner: context.caller.agentId })
      .filter((skill) => canManage(skill, context.caller));
    for (const candidate of candidates) {
      const outcome = await this.perName.run(candidate.name, async () => {
        const skill = this.registry.get(candidate.name);
        if (!skill) return undefined;
        const reasons = retirementReasons(skill, this.policy);
        if (reasons.length === 0) return undefined;
        const dependents = this.composition.dependents(skill.name);
        if (dependents.length > 0 && !force) {
          // `kept` goes back to the caller: dependents it may not see are counted, not named.
          const view = dependentsInView(dependents, context.caller);
          const verb = dependentCount(view) === 1 ? "depends" : "depend";
          kept.push({
            name: skill.name,
            reasons: [...reasons, `kept: ${describeDependents(view)} ${verb} on it (force retires it anyway)`],
          });
          return undefined;
        }
        if (!dryRun) {
          const retiredSkill = this.registry.setStatus(skill.name, "retired", reasons.join("; "), this.now());
          await this.store.moveSkill(skill.name, locationOf(skill.status), "retired", this.now());
          await this.reindex(retiredSkill);
          this.logger.warn({ skill: skill.name, reasons, agent: context.caller.agentId, requestId: context.requestId }, "skill retired");
        }
        return { name: skill.name, reasons };
      });
      if (outcome) retired.push(outcome);
    }
    if (retired.length > 0 && !dryRun) await this.mirror.flushOrLater();
    return retired;
  }

  async invoke(name: string, payloadText: string, context: CallContext, routeId = ""): Promise<InvocationResult> {
    if (context.idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(context.idempotencyKey)) {
      throw new InvalidArgumentError("idempotency_key", "must be 1 to 200 printable ASCII characters (no spaces)");
    }
    const skill = this.liveSkill(this.visibleSkill(name, context.caller), "invoke");
    if (!skill.enabled) throw disabledError(skill, "invoke");
    // A grant with a version pins the grantee to it (docs/security.md#pinned-grants).
    const pinned = pinnedVersionFor(skill, context.caller);
    const validate =
      pinned === undefined || pinned === skill.version
        ? this.payloadValidatorFor(skill)
        : compileParametersSchema(this.registry.version(name, pinned)?.parametersSchema ?? skill.parametersSchema);
    const payload = validate("payload", payloadText);
    const resolved = this.composition.resolve(pinned === undefined ? { name } : { name, version: pinned }, context.caller, "invoke");
    const { result, steps, warnings } = await this.execute(resolved, payload, context, 1, true);
    const recorded = this.recordTelemetry(name, resolved.version, result, context);
    const updated = recorded.skill;
    if (updated && updated.status !== skill.status) {
      this.logger.warn({ skill: name, from: skill.status, to: updated.status, reason: updated.statusReason }, "skill status changed");
      await this.mirror.flushOrLater();
      await this.reindex(updated);
    } else {
      this.mirror.schedule();
    }
    if (routeId !== "" && updated) {
      await this.creditRoute(routeId, updated, result.success, context.caller);
      await this.indexer?.applied?.(routeId, updated, result.success, context.caller.agentId).catch((error: unknown) => {
        this.logger.error({ err: error, skill: name, routeId }, "could not count the routed invocation");
      });
    }
    return {
      result,
      version: resolved.version,
      steps,
      warnings: [...this.composition.retestWarnings(skill), ...warnings],
      invocationId: recorded.invocationId,
    };
  }

  private recordTelemetry(
    name: string,
    version: number,
    result: ExecutionResult,
    context: CallContext,
  ): { skill: SkillRecord | undefined; invocationId: string } {
    return this.recordInvocation({
      name,
      version,
      at: this.now(),
      success: result.success,
      durationMs: result.durationMs,
      exitCode: result.exitCode,
      timedOut: result.timedOut,
      oomKilled: result.oomKilled,
      errorSummary: result.errorSummary,
      caller: context.caller.agentId,
    });
  }

  /**
   * Runs one resolved skill version: a plain skill in a sandbox with its dependencies' code beside
   * it, a composed skill step by step (`depth` counts the nesting). `telemetry` records every
   * step skill's invocation (the caller records the skill itself); test runs record nothing.
   */
  private async execute(
    resolved: ResolvedSkill,
    payload: string,
    context: CallContext,
    depth: number,
    telemetry: boolean,
  ): Promise<{ result: ExecutionResult; steps: StepOutcome[]; warnings: string[] }> {
    // The active version through activeCode, which also repairs an altered canonical file; a pinned one from history.
    const code =
      resolved.version === resolved.record.version ? await this.activeCode(resolved.record) : await this.composition.readCode(resolved);
    const name = resolved.record.name;
    if (resolved.declared.kind === "composed") {
      let definition: CompositionDefinition | undefined;
      try {
        definition = parseStoredDefinition(code);
      } catch (error) {
        throw new InternalError(
          `the stored definition of composed skill "${name}" v${resolved.version} is malformed: ${errorMessage(error)}`,
        );
      }
      if (!definition)
        throw new InternalError(`the stored definition of composed skill "${name}" v${resolved.version} is not a composition`);
      return this.runComposed(name, definition, payload, context, depth, telemetry);
    }
    const folderRun = await this.folders?.runOf(name, resolved.version);
    if (folderRun?.kind === "instructions") {
      throw new FailedPreconditionError(`"${name}" is an instructions-only skill: there is nothing to run; read it with GetSkillContent`);
    }
    if (folderRun) {
      const result = await this.run(telemetry ? "invoke" : "test", name, folderRun.launcher, payload, context, [], folderRun.folder);
      return { result, steps: [], warnings: [] };
    }
    const files = await this.composition.dependencyFiles(name, resolved.declared.dependsOn);
    return { result: await this.run(telemetry ? "invoke" : "test", name, code, payload, context, files), steps: [], warnings: [] };
  }

  /** A composition's steps, each a full invocation of its skill (docs/composition.md#running). */
  private async runComposed(
    name: string,
    definition: CompositionDefinition,
    payload: string,
    context: CallContext,
    depth: number,
    telemetry: boolean,
  ): Promise<{ result: ExecutionResult; steps: StepOutcome[]; warnings: string[] }> {
    if (depth > this.composition.settings.maxDepth) {
      throw new FailedPreconditionError(
        `cannot run "${name}": composed skills nest deeper than ${this.composition.settings.maxDepth} (SKILL_ENGINE_COMPOSITION_MAX_DEPTH)`,
      );
    }
    // A step skill that failed its re-test against a new dependency version runs only with the caller told so.
    const warnings: string[] = [];
    // A test run's payload is the registration's test_payload (docs/composition.md#definition: nesting).
    const params = parseCompositionPayload(payload, telemetry ? "payload" : "test_payload");
    const run = await runComposition(
      definition,
      params,
      async (ref: SkillRef, stepPayload: string) => {
        const step = this.composition.resolve(ref, context.caller, `cannot run "${name}": its step skill`);
        try {
          // The active version's validator is cached; a pinned version's schema is compiled for the call.
          const validate =
            step.version === step.record.version
              ? this.payloadValidatorFor(step.record)
              : compileParametersSchema(this.registry.version(ref.name, step.version)?.parametersSchema ?? '{"type":"object"}');
          validate("payload", stepPayload);
        } catch (error) {
          if (error instanceof InvalidArgumentError) throw new StepPayloadError(`its payload does not fit "${ref.name}": ${error.message}`);
          throw error;
        }
        const ran = await this.execute(step, stepPayload, context, depth + 1, telemetry);
        for (const warning of [...this.composition.retestWarnings(step.record), ...ran.warnings]) {
          if (!warnings.includes(warning)) warnings.push(warning);
        }
        if (telemetry) {
          const updated = this.recordTelemetry(step.record.name, step.version, ran.result, context).skill;
          if (updated && updated.status !== step.record.status) {
            await this.mirror.flushOrLater();
            await this.reindex(updated);
          } else {
            this.mirror.schedule();
          }
        }
        return { skill: step.record.name, version: step.version, result: ran.result };
      },
      this.composition.conditions,
    );
    return { ...run, warnings };
  }

  /**
   * Records an invocation's result. A registry that cannot be written now (a full disk, a lock
   * held elsewhere, a read-only file system) loses this one record, logged, and the caller still
   * gets the result it waited for: invocations keep working while the disk is full.
   */
  private recordInvocation(record: Parameters<SkillRegistry["recordInvocation"]>[0]): {
    skill: SkillRecord | undefined;
    invocationId: string;
  } {
    try {
      const recorded = this.registry.recordInvocationWithId(record);
      return { skill: recorded.skill, invocationId: String(recorded.invocationId) };
    } catch (error) {
      if (!(error instanceof SkillEngineError) || (error.kind !== "resource-exhausted" && error.kind !== "unavailable")) throw error;
      this.logger.error(
        { err: error, skill: record.name, success: record.success },
        "could not record the invocation; its result was returned",
      );
      return { skill: undefined, invocationId: "" };
    }
  }

  /** Explicit routing feedback (RecordRouteFeedback); only for the caller's own routes. */
  async recordRouteFeedback(routeId: string, name: string, success: boolean, context: CallContext, fallback = false): Promise<boolean> {
    if (routeId.trim() === "") throw new InvalidArgumentError("route_id", "is required: the id RouteSkills returned");
    const skill = this.visibleSkill(name, context.caller);
    // A fallback says the agent used something else: no success to credit (docs/skill-sources.md#quality-counters).
    if (fallback) {
      if (success)
        throw new InvalidArgumentError("fallback", "cannot be set together with success: the agent either used the skill or replaced it");
      return (await this.indexer?.fallback?.(routeId, skill, context.caller.agentId)) ?? false;
    }
    return this.creditRoute(routeId, skill, success, context.caller);
  }

  private async creditRoute(routeId: string, skill: SkillRecord, success: boolean, caller: Caller): Promise<boolean> {
    if (!this.indexer) return false;
    try {
      return await this.indexer.credit(routeId, skill, success, caller.agentId);
    } catch (error) {
      this.logger.error({ err: error, skill: skill.name, routeId }, "could not record routing feedback");
      return false;
    }
  }

  /**
   * Near-duplicates at the door (docs/learning.md#near-duplicates), for every kind of registration
   * (plain, composed, directory, import): compares the new skill with every other skill the caller
   * can see; "reject" refuses a near-duplicate with ALREADY_EXISTS. An embedder that cannot answer
   * is logged and screens nothing: registration never depends on it.
   */
  async screenDuplicates(skill: SkillText, context: CallContext, onDuplicate: OnDuplicate): Promise<SimilarSkillReport[]> {
    if (!this.duplicates) return [];
    const others = this.registry.describedSkills(this.listScope(context)).filter((s) => s.name !== skill.name);
    let similar: SimilarSkillReport[];
    try {
      similar = await this.duplicates.screen(skill, others, async (name) => (await this.store.readActive(name)) ?? "");
    } catch (error) {
      this.logger.error({ err: error, skill: skill.name }, "could not look for near-duplicates; registering without");
      return [];
    }
    const near = similar.find((s) => s.nearDuplicate);
    if (near && onDuplicate === "reject") {
      this.duplicates.recordVerdict?.("rejected");
      throw new AlreadyExistsError(
        `near-duplicate of ${near.name}: patch ${near.name} instead (description similarity ${near.descriptionSimilarity}, code similarity ${near.codeSimilarity})`,
      );
    }
    if (near) this.duplicates.recordVerdict?.("warned");
    return similar;
  }

  /** After an outcome changed a skill's record: the mirror and routing follow a status change. */
  async noteStatusChange(before: SkillRecord, after: SkillRecord): Promise<void> {
    if (after.status === before.status) {
      this.mirror.schedule();
      return;
    }
    this.logger.warn({ skill: after.name, from: before.status, to: after.status, reason: after.statusReason }, "skill status changed");
    await this.mirror.flushOrLater();
    await this.reindex(after);
  }

  /**
   * Keeps routing in step; a failure is logged (the next start re-indexes), never fatal here. The
   * embedding runs on after the caller has its answer: routing waits for it, and a crash before it
   * is written is repaired at the next start (docs/performance.md#registration).
   */
  private async reindex(skill: SkillRecord, exampleQueries: readonly string[] = []): Promise<void> {
    if (!this.indexer) return;
    const failed = (error: unknown): void => {
      this.logger.error({ err: error, skill: skill.name }, "could not update the routing index");
    };
    try {
      this.indexer.sync(skill, exampleQueries).catch(failed);
    } catch (error) {
      failed(error);
    }
  }

  async get(name: string, context: CallContext): Promise<SkillWithCode> {
    const skill = this.visibleSkill(name, context.caller);
    // A grantee pinned to a version reads the code it runs (docs/security.md#pinned-grants).
    const pinned = pinnedVersionFor(skill, context.caller);
    const version = pinned === undefined || pinned === skill.version ? undefined : this.registry.version(name, pinned);
    if (version) {
      const declared = this.composition.dependencies.get(name, version.version);
      const code = await this.composition.readCode({
        ref: { name, version: version.version },
        record: skill,
        version: version.version,
        contentHash: version.contentHash,
        declared,
      });
      return { skill, code, kind: declared.kind, dependsOn: declared.dependsOn, folder: this.folders?.header(skill) };
    }
    const declared = this.composition.declaredOf(skill);
    return {
      skill,
      code: await this.activeCode(skill),
      kind: declared.kind,
      dependsOn: declared.dependsOn,
      folder: this.folders?.header(skill),
    };
  }

  /** GetSkillDependencies: what it needs, what needs it, the load order, what blocks it. */
  dependencies(name: string, context: CallContext): DependencyReport {
    const report = this.composition.report(this.visibleSkill(name, context.caller));
    // Dependents the caller may not see stay unnamed, as everywhere else.
    const dependents = report.dependents.filter((d) => {
      const record = this.registry.get(d);
      return record !== undefined && canSee(record, context.caller);
    });
    return { ...report, dependents };
  }

  /** GetCatalog: every skill the caller may see, with its dependency status. */
  catalog(context: CallContext): CatalogEntry[] {
    return this.list(context, { includeInactive: true }).map((skill) => this.composition.catalogEntry(skill));
  }

  /**
   * FAILED_PRECONDITION listing the live dependents of `name`, unless `force` (then each is warned
   * about). Dependents the caller may not see are counted, not named (docs/security.md#dependents-you-cannot-see).
   */
  private protectDependents(name: string, action: string, force: boolean, context: CallContext): void {
    const records = this.composition.dependents(name);
    const dependents = records.map((d) => d.name);
    if (dependents.length === 0) return;
    if (!force) {
      const view = dependentsInView(records, context.caller);
      const one = dependentCount(view) === 1;
      throw new FailedPreconditionError(
        `cannot ${action} "${name}": ${describeDependents(view)} depend${one ? "s" : ""} on it; ` +
          `change or remove ${one ? "it" : "them"} first, or set force (their invocations then fail naming "${name}")`,
      );
    }
    this.logger.warn(
      { skill: name, dependents, agent: context.caller.agentId, requestId: context.requestId },
      `${action} forced: dependents are blocked`,
    );
  }

  /** The skills the caller may see, optionally only one owner's. */
  list(context: CallContext, options: { includeInactive?: boolean; owner?: string } = {}): SkillRecord[] {
    if (options.owner !== undefined) {
      const ownerProblem = agentIdProblem(options.owner);
      if (ownerProblem) throw new InvalidArgumentError("owner", ownerProblem);
    }
    return this.registry.list({
      ...this.listScope(context),
      includeInactive: options.includeInactive ?? false,
      ...(options.owner === undefined ? {} : { owner: options.owner }),
    });
  }

  /** What a caller's listings cover: everything for an admin, the skills it may see otherwise (docs/security.md#the-access-table). */
  private listScope(context: CallContext): { visibleTo?: string; visibleToUser?: string } {
    if (context.caller.admin) return {};
    return { visibleTo: context.caller.agentId, ...(context.caller.userId === undefined ? {} : { visibleToUser: context.caller.userId }) };
  }

  versions(name: string, context: CallContext): { skill: SkillRecord; versions: VersionRecord[] } {
    const skill = this.visibleSkill(name, context.caller);
    return { skill, versions: this.registry.versions(name) };
  }

  stats(name: string, context: CallContext): SkillStats {
    const skill = this.visibleSkill(name, context.caller);
    const now = this.now();
    const usage = this.registry.usage(name, skill.version, now);
    return {
      skill,
      ageDays: (now.getTime() - skill.createdAt.getTime()) / DAY_MS,
      successRate: windowRate(usage.window, this.policy),
      invocationVelocity7d: usage.invocationsLast7Days / 7,
      p50DurationMs: quantile(usage.recentDurationsMs, 0.5) ?? 0,
      p95DurationMs: quantile(usage.recentDurationsMs, 0.95) ?? 0,
      windowSamples: usage.window.samples,
      windowSuccesses: usage.window.successes,
      totalInvocations: usage.totalInvocations,
      totalSuccesses: usage.totalSuccesses,
      quality: this.indexer?.quality?.(name),
      bySource: usage.window.bySource,
    };
  }

  /**
   * The kind of each skill the caller may see: a folder skill's (directory or instructions), else what
   * its active version declares (plain or composed). Others are left out.
   */
  kinds(skills: readonly SkillRecord[], context: CallContext): Map<string, LibraryKind> {
    const kinds = new Map<string, LibraryKind>();
    for (const skill of skills) {
      if (!canSee(skill, context.caller)) continue;
      kinds.set(skill.name, this.folders?.header(skill)?.kind ?? this.composition.declaredOf(skill).kind);
    }
    return kinds;
  }

  /** The lifecycle thresholds in force, for views that explain them. */
  get healthPolicy(): HealthPolicy {
    return this.policy;
  }

  /**
   * The rolling window (docs/skill-lifecycle.md#rolling-window) of each skill the caller may see,
   * oldest outcome first; skills it may not see are left out.
   */
  recentOutcomes(skills: readonly SkillRecord[], context: CallContext): Map<string, boolean[]> {
    const visible = skills.filter((skill) => canSee(skill, context.caller));
    return this.registry.recentOutcomes(
      visible.map((skill) => ({ name: skill.name, version: skill.version })),
      this.policy.windowSize,
    );
  }

  /**
   * A skill's health over time (docs/console.md#health-timeline): invocations and successes per
   * UTC day and version over the last `days` days, its versions (when each was committed), and
   * duration percentiles per version over each version's last 100 invocations.
   */
  healthTimeline(name: string, days: number, context: CallContext): HealthTimeline {
    if (!Number.isInteger(days) || days < 1 || days > 366)
      throw new InvalidArgumentError("days", "must be a whole number of days in [1, 366]");
    const skill = this.visibleSkill(name, context.caller);
    const now = this.now();
    const since = new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS - (days - 1) * DAY_MS);
    const durations = [...this.registry.durationsByVersion(name, TIMELINE_DURATIONS)].map(([version, values]) => ({
      version,
      samples: values.length,
      p50Ms: quantile(values, 0.5) ?? 0,
      p95Ms: quantile(values, 0.95) ?? 0,
      p99Ms: quantile(values, 0.99) ?? 0,
    }));
    return { skill, since, days: this.registry.dailyOutcomes(name, since), versions: this.registry.versions(name), durations };
  }

  /** The code of one version of a skill the caller may see (its history file, checked against the registry). */
  async versionCode(name: string, version: number, context: CallContext): Promise<string> {
    if (!Number.isInteger(version) || version < 1) throw new InvalidArgumentError("version", "must be a version number ≥ 1");
    const skill = this.visibleSkill(name, context.caller);
    const record = this.registry.version(name, version);
    if (!record) throw new SkillVersionNotFoundError(name, version, skill.latestVersion);
    const code = await this.store.readVersion(name, version);
    if (code === undefined || contentHash(code) !== record.contentHash) {
      throw new InternalError(`the history file of "${name}" v${version} is missing or altered`);
    }
    return code;
  }

  /** How many routed queries are stored as evidence for a skill the caller may see (docs/routing.md#learning-from-use). */
  routingEvidence(name: string, context: CallContext): number {
    this.visibleSkill(name, context.caller);
    return this.indexer?.evidenceCount(name) ?? 0;
  }

  /**
   * Retires one skill by hand (owner or admin; live skills only): what the retirement rule does,
   * with the caller as the reason. Dependents protect it unless `force` (docs/skill-lifecycle.md#retire-by-hand).
   */
  async retire(name: string, context: CallContext, force = false): Promise<SkillRecord> {
    validateSkillName(name);
    return this.perName.run(name, async () => {
      const skill = this.liveSkill(this.manageableSkill(name, context.caller, "retire"), "retire");
      this.protectDependents(name, "retire", force, context);
      const retired = await this.takeOut(skill, "retired", `retired by ${context.caller.agentId}`);
      this.logger.warn({ skill: name, agent: context.caller.agentId, requestId: context.requestId }, "skill retired by hand");
      return retired;
    });
  }

  /** Takes a skill out of service: its status, then its files, the mirror and routing follow. */
  private async takeOut(skill: SkillRecord, status: "retired" | "deleted", reason: string): Promise<SkillRecord> {
    const updated = this.registry.setStatus(skill.name, status, reason, this.now());
    await this.store.moveSkill(skill.name, locationOf(skill.status), status === "deleted" ? "trash" : "retired", this.now());
    await this.mirror.flushOrLater();
    await this.reindex(updated);
    return updated;
  }

  async wipeSandbox(context: CallContext): Promise<number> {
    requireAdmin(context.caller, "WipeSandbox");
    const { removedRunDirectories } = await this.runner.wipe();
    this.logger.warn({ removedRunDirectories, agent: context.caller.agentId, requestId: context.requestId }, "sandbox wiped by request");
    return removedRunDirectories;
  }

  /** Runs the TDD gate: the code must exit 0 and print something on its test payload. */
  private async testRun(
    name: string,
    code: string,
    payload: string,
    context: CallContext,
    files: readonly SandboxFile[] = [],
  ): Promise<ExecutionResult> {
    return this.testVerdict(name, await this.run("test", name, code, payload, context, files), context);
  }

  /**
   * A registration's test run started on the code as sent before intake's verdict (see
   * {@link CodeIntake.begin}); none when the test payload is invalid (intake's error comes first).
   * `discard` cancels it (its container is killed and removed like any cancelled run's).
   */
  private startEarlyTest(
    name: string,
    code: string,
    valid: ValidRegistration,
    loadingFiles: Promise<SandboxFile[]>,
    context: CallContext,
  ): { readonly code: string; readonly result: Promise<ExecutionResult>; discard(): void } | undefined {
    let payload: string;
    try {
      payload = valid.validatePayload("test_payload", valid.testPayload);
    } catch {
      return undefined;
    }
    const controller = new AbortController();
    const signal = anySignal([context.signal, controller.signal]);
    const result = loadingFiles
      .then((files) => this.run("test", name, code, payload, { ...context, signal }, files))
      .finally(() => signal.clear());
    result.catch(() => undefined); // observed by the registration, or discarded
    return { code, result, discard: () => controller.abort() };
  }

  /** A test run's verdict: the result, or a {@link SkillTestFailedError} with the run's one-line cause. */
  private testVerdict(name: string, test: ExecutionResult, context: CallContext): ExecutionResult {
    if (!test.success) {
      this.logger.info(
        { skill: name, cause: test.errorSummary, agent: context.caller.agentId, requestId: context.requestId },
        "code rejected by its test run",
      );
      throw new SkillTestFailedError(name, test.errorSummary);
    }
    return test;
  }

  /** One sandbox run of `code` on `payload`, stopped when the call is cancelled or its deadline passes. */
  private run(
    purpose: SandboxRunRequest["purpose"],
    skillName: string,
    code: string,
    payload: string,
    context: CallContext,
    files: readonly SandboxFile[] = [],
    folder: readonly SandboxFolderFile[] = [],
  ): Promise<ExecutionResult> {
    return this.runner.run({
      code,
      payload,
      purpose,
      skillName,
      // Every run counts against its caller's share of the queue, test runs and steps included.
      agentId: context.caller.agentId,
      ...(files.length > 0 ? { files } : {}),
      ...(folder.length > 0 ? { folder } : {}),
      ...(context.signal ? { signal: context.signal } : {}),
      ...(context.idempotencyKey && purpose === "invoke" ? { idempotencyKey: context.idempotencyKey } : {}),
    });
  }

  /**
   * Writes version n+1 and makes it active. Call under the name's lock. A retired or deleted
   * skill's files come back to the active directory first, so its history stays in one place.
   */
  private async commitNewVersion(
    name: string,
    code: string,
    description: string,
    parametersSchema: string,
    testPayload: string,
    origin: VersionOrigin,
    access: SkillAccess,
    declared: DeclaredDependencies = { kind: "plain", dependsOn: [] },
    extra?: VersionExtras,
    staged?: StagedFiles,
  ): Promise<SkillRecord> {
    const existing = this.registry.get(name);
    const from = existing && !isLive(existing.status) ? locationOf(existing.status) : undefined;
    if (from === undefined)
      return this.writeAndCommit(name, code, description, parametersSchema, testPayload, origin, access, declared, extra, staged);
    // Files staged for a live skill are not used for one whose files come back from elsewhere.
    await staged?.discard();
    await this.store.moveSkill(name, from, "active", this.now()).catch((error: unknown) => {
      throw fromStoreError(error, `bring the files of "${name}" back from ${from}`);
    });
    try {
      return await this.writeAndCommit(name, code, description, parametersSchema, testPayload, origin, access, declared, extra);
    } catch (error) {
      // Nothing was committed: the files go back where the registry says they are.
      await this.store.moveSkill(name, "active", from, this.now()).catch((moveError: unknown) => {
        this.logger.error({ err: moveError, skill: name }, "could not move the files back; the next start's reconciliation does");
      });
      throw error;
    }
  }

  private async writeAndCommit(
    name: string,
    code: string,
    description: string,
    parametersSchema: string,
    testPayload: string,
    origin: VersionOrigin,
    access: SkillAccess,
    declared: DeclaredDependencies,
    extra?: VersionExtras,
    staged?: StagedFiles,
  ): Promise<SkillRecord> {
    const version = this.registry.nextVersion(name);
    // History file and new active file are written in full before the registry commits; when any
    // step fails (a full or read-only disk, a locked registry) what was written is removed and the
    // skill stays as it was (docs/operations.md#full-disks-and-a-locked-registry).
    const action = `write version ${version} of "${name}"`;
    // The history file and the new active file do not depend on each other: written (and
    // fsynced) side by side, the caller waits for one disk flush instead of two
    // (docs/performance.md#registration).
    const [history, prepared] = await Promise.allSettled([
      staged ? staged.history.then((file) => file.commitAs(version)) : this.store.writeVersion(name, version, code),
      staged ? staged.active : this.store.prepareActive(name, code),
    ]);
    if (history.status === "rejected" || prepared.status === "rejected") {
      if (prepared.status === "fulfilled") await prepared.value.discard();
      await staged?.discard();
      await this.store.discardUncommittedVersion(name, version);
      throw fromStoreError(history.status === "rejected" ? history.reason : (prepared as PromiseRejectedResult).reason, action);
    }
    const active = prepared.value;
    // Before the version exists, so an acknowledged version never lacks its declaration. Its
    // failure (a full or read-only disk, a locked registry) leaves nothing behind either.
    await this.composition.record(name, version, declared).catch(async (error: unknown) => {
      await active.discard();
      await this.store.discardUncommittedVersion(name, version);
      throw error instanceof SkillEngineError ? error : fromStoreError(error, action);
    });
    if (extra) {
      await extra.before(version).catch(async (error: unknown) => {
        await extra.discard(version).catch(() => undefined);
        await active.discard();
        await this.store.discardUncommittedVersion(name, version);
        throw error instanceof SkillEngineError ? error : fromStoreError(error, action);
      });
    }
    let committed: SkillRecord;
    try {
      // A write too (a locked registry refuses it): inside, so its failure leaves nothing behind.
      this.composition.dependencies.clearRetests(name);
      committed = this.registry.commitVersion(
        {
          name,
          version,
          description,
          parametersSchema,
          testPayload,
          contentHash: contentHash(code),
          origin,
          createdAt: this.now(),
        },
        { owner: access.owner, visibility: access.visibility },
      );
    } catch (error) {
      await active.discard();
      await extra?.discard(version).catch(() => undefined);
      await this.store.discardUncommittedVersion(name, version);
      throw error;
    }
    // The active file's rename is visible at once; the fsync of its directory comes with the
    // mirror's rewrite of the same directory just after the reply. The mirror is a copy of the
    // registry for rebuilding it, rewritten at every start too; a crash before either is on disk
    // leaves the registry ahead of them, which start-up repairs from the history
    // (docs/performance.md#what-a-crash-can-lose).
    this.commitPreparedNow(active, name);
    this.mirror.flushAfterReply();
    return committed;
  }

  /** Starts writing a new version's history and active files ahead of its number (see {@link StagedFiles}). */
  private stageFiles(name: string, code: string): StagedFiles {
    const history = this.store.stageVersion(name, code);
    const active = this.store.prepareActive(name, code);
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
   * Puts a prepared active file in place after the registry committed. A rename needs no new
   * space, so this fails only if the directory itself went away or read-only; the registry is then
   * ahead of the file, which the next read restores from the history (readActiveCode).
   */
  private async commitPrepared(active: PreparedFile, name: string): Promise<void> {
    await active.commit().catch((error: unknown) => this.activeFileNotPlaced(error, name));
  }

  /**
   * {@link commitPrepared} on the calling thread (a registration's critical path), without the
   * directory's fsync: the mirror's rewrite of the same directory just after the reply brings it
   * (docs/performance.md#what-a-crash-can-lose).
   */
  private commitPreparedNow(active: PreparedFile, name: string): void {
    try {
      active.commitNow();
    } catch (error) {
      this.activeFileNotPlaced(error, name);
    }
  }

  private activeFileNotPlaced(error: unknown, name: string): void {
    this.logger.error({ err: error, skill: name }, "could not put the active file in place; the next read restores it from history");
  }

  private existingSkill(name: string): SkillRecord {
    validateSkillName(name);
    const skill = this.registry.get(name);
    if (!skill) throw new SkillNotFoundError(name);
    return skill;
  }

  /** A skill the caller may see; anybody else's private skill is NOT_FOUND, exactly like no skill. */
  private visibleSkill(name: string, caller: Caller): SkillRecord {
    const skill = this.existingSkill(name);
    if (!canSee(skill, caller)) throw new SkillNotFoundError(name);
    return skill;
  }

  /** A skill the caller may change: PERMISSION_DENIED for another agent's public skill. */
  private manageableSkill(name: string, caller: Caller, action: string): SkillRecord {
    const skill = this.visibleSkill(name, caller);
    if (!canManage(skill, caller)) throw notYoursError(name, skill, action, caller);
    return skill;
  }

  /**
   * Owner and visibility of the version a registration commits. Names are global (the canonical
   * store is laid out by name), so a name held by another agent's skill, in any status, is
   * refused: PERMISSION_DENIED when the caller can see that skill, else ALREADY_EXISTS, which
   * says the name is taken and nothing else about it.
   */
  private accessForRegistration(
    name: string,
    caller: Caller,
    visibility: SkillVisibility | undefined,
    existing = this.registry.get(name),
  ): SkillAccess {
    if (!existing) return { owner: caller.agentId, visibility: visibility ?? "private" };
    if (!canManage(existing, caller)) {
      if (canSee(existing, caller)) throw notYoursError(name, existing, "register a new version of", caller);
      throw new AlreadyExistsError(`the name "${name}" is taken by another agent's skill; choose another name`);
    }
    return { owner: existing.owner, visibility: visibility ?? existing.visibility };
  }

  /** A skill that can run: retired and deleted ones answer FAILED_PRECONDITION with the way back. */
  private liveSkill(skill: SkillRecord, action: string): SkillRecord {
    if (!isLive(skill.status)) {
      const why = skill.statusReason ? ` (${skill.statusReason})` : "";
      throw new FailedPreconditionError(`cannot ${action} "${skill.name}": it is ${skill.status}${why}; RestoreSkill brings it back`);
    }
    return skill;
  }

  /**
   * The active code from the canonical store, checked against the registry's hash. A file that
   * went missing or was altered on disk is restored from the immutable history.
   */
  private async activeCode(skill: SkillRecord): Promise<string> {
    return (await this.readActiveCode(skill)).code;
  }

  private async readActiveCode(skill: SkillRecord): Promise<{ code: string; restored: boolean }> {
    const location = locationOf(skill.status);
    const active = await this.store.readActive(skill.name, location);
    if (active !== undefined && contentHash(active) === skill.contentHash) return { code: active, restored: false };
    const fromHistory = await this.store.readVersion(skill.name, skill.version, location);
    if (fromHistory === undefined || contentHash(fromHistory) !== skill.contentHash) {
      throw new InternalError(
        `the canonical code of "${skill.name}" v${skill.version} is missing or altered and no intact copy exists in its history`,
      );
    }
    this.logger.warn({ skill: skill.name, version: skill.version }, "canonical file missing or altered; restored from history");
    await this.store.writeActive(skill.name, fromHistory, location);
    return { code: fromHistory, restored: true };
  }

  private payloadValidatorFor(skill: SkillRecord): PayloadValidator {
    const key = `${skill.version}:${skill.contentHash}`;
    const cached = this.validators.get(skill.name);
    if (cached?.key === key) return cached.validate;
    const validate = compileParametersSchema(skill.parametersSchema);
    this.validators.set(skill.name, { key, validate });
    return validate;
  }
}

/** What a folder skill's version writes beside the registry (its canonical folder, its source row). */
interface VersionExtras {
  readonly before: (version: number) => Promise<void>;
  readonly discard: (version: number) => Promise<void>;
}

function checkExampleQueries(exampleQueries: readonly string[]): void {
  if (exampleQueries.length > EXAMPLE_QUERY_LIMITS.count) {
    throw new InvalidArgumentError("example_queries", `has ${exampleQueries.length} entries; the limit is ${EXAMPLE_QUERY_LIMITS.count}`);
  }
  const tooLong = exampleQueries.findIndex((q) => q.length > EXAMPLE_QUERY_LIMITS.chars);
  if (tooLong >= 0) {
    throw new InvalidArgumentError(`example_queries[${tooLong}]`, `is longer than ${EXAMPLE_QUERY_LIMITS.chars} characters`);
  }
}
