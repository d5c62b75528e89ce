import type { Logger } from "pino";
import type { HostPattern } from "../../egress/index.js";
import { EgressNotAllowedError, FailedPreconditionError, InternalError, SecretMissingError, SkillEngineError } from "../../errors/index.js";
import type {
  ExecutionResult,
  RunInputFile,
  SandboxEnvironment,
  SandboxFile,
  SandboxFolderFile,
  SandboxRunner,
  SandboxRunRequest,
} from "../../execution/index.js";
import { SecretRedactor, uncoveredHost, withNetworkHint } from "../access/index.js";
import type { CallContext } from "../call-context.js";
import type { Composition } from "../composition/index.js";
import type { DuplicateScreen } from "../duplicate-screen.js";
import type { RoutingGate } from "../routing-gate.js";
import { compileParametersSchema, type CodeIntake, type InputFileLimits, type PayloadValidator } from "../intake/index.js";
import { KeyedMutex } from "../../concurrency/index.js";
import type { HealthPolicy, SkillRecord, SkillRegistry, VersionPackages } from "../registry/index.js";
import type { SkillIndexer } from "../skill-indexer.js";
import { type CanonicalStore, contentHash, locationOf, type MirrorWriter, type StoreLocation } from "../store/index.js";
import type { ControlDependencies, FolderSkillRuns, SkillEnvironments, SkillSecrets } from "./control-dependencies.js";
import { SkillLookup } from "./skill-lookup.js";

/** One sandbox run a use case asks for. */
export interface SandboxRunInput {
  readonly purpose: SandboxRunRequest["purpose"];
  readonly skillName: string;
  readonly code: string;
  readonly payload: string;
  /** Dependencies' code placed beside the skill. */
  readonly files?: readonly SandboxFile[];
  /** A folder skill's files (docs/skill-sources.md#running). */
  readonly folder?: readonly SandboxFolderFile[];
  /** The version's environment of packages (docs/packages.md#at-run-time). */
  readonly environment?: SandboxEnvironment | undefined;
  /** The caller's files, under /sandbox/in/ (docs/files.md#input-files); validated. */
  readonly inputFiles?: readonly RunInputFile[];
  /** The secret names the version declares: the caller's values are handed to the run (docs/security.md#declaring-and-delivering). */
  readonly secrets?: readonly string[];
  /** The hosts the version declares (docs/security.md#declaring-hosts): checked against the operator's policy, then handed to the run. */
  readonly networkAllow?: readonly string[];
}

const NO_SECRETS: ReadonlyMap<string, string> = new Map();

/** What a call may hand a run when the deployment does not say (docs/files.md#input-files). */
const DEFAULT_INPUT_FILE_LIMITS: InputFileLimits = { maxFiles: 64, maxTotalBytes: 16 * 1024 * 1024 };

/**
 * What every use case shares (temporalio's base client under its sub-clients): the stores, the
 * lookups, the per-name lock, re-indexing, telemetry and the sandbox. Every change of a skill is
 * serialized per name; the registry commits first and the files follow, which is the order
 * start-up reconciliation relies on.
 */
export class SkillCore {
  readonly registry: SkillRegistry;
  readonly store: CanonicalStore;
  readonly mirror: MirrorWriter;
  readonly intake: CodeIntake;
  readonly policy: HealthPolicy;
  readonly logger: Logger;
  readonly composition: Composition;
  readonly indexer: SkillIndexer | undefined;
  readonly duplicates: DuplicateScreen | undefined;
  readonly routingGate: RoutingGate | undefined;
  readonly folders: FolderSkillRuns | undefined;
  readonly environments: SkillEnvironments | undefined;
  readonly now: () => Date;
  readonly lookup: SkillLookup;
  readonly inputFileLimits: InputFileLimits;
  /** The operator's egress policy: the hosts any version may declare (docs/security.md#declaring-hosts). */
  readonly egressPolicy: readonly HostPattern[];
  private readonly runner: SandboxRunner;
  private readonly secrets: SkillSecrets | undefined;
  private readonly perName = new KeyedMutex();
  private readonly validators = new Map<string, { key: string; validate: PayloadValidator }>();

  constructor(deps: ControlDependencies) {
    this.registry = deps.registry;
    this.store = deps.store;
    this.runner = deps.runner;
    this.secrets = deps.secrets;
    this.mirror = deps.mirror;
    this.intake = deps.intake;
    this.policy = deps.policy;
    this.logger = deps.logger;
    this.composition = deps.composition;
    this.indexer = deps.indexer;
    this.duplicates = deps.duplicates;
    this.routingGate = deps.routingGate;
    this.folders = deps.folders;
    this.environments = deps.environments;
    this.now = deps.now ?? (() => new Date());
    this.lookup = new SkillLookup(deps.registry);
    this.inputFileLimits = deps.inputFiles ?? DEFAULT_INPUT_FILE_LIMITS;
    this.egressPolicy = deps.egressPolicy ?? [];
  }

  /** Runs `work` after every earlier change of `name` has finished: one change of a skill at a time. */
  locked<T>(name: string, work: () => Promise<T>): Promise<T> {
    return this.perName.run(name, work);
  }

  /** The sandbox port, for what is not a run of a skill (the sandbox wipe). */
  get sandbox(): SandboxRunner {
    return this.runner;
  }

  /**
   * One sandbox run, stopped when the call is cancelled or its deadline passes. The caller's values
   * of the version's secrets go with it, and its result comes back with every one of them redacted
   * before anything records, logs or returns it (docs/security.md#redaction); a value the caller has
   * not set refuses the run before any container starts ({@link secretValues}), as does a declared
   * host the operator's policy no longer covers ({@link checkEgressPolicy}).
   */
  async runSandbox(input: SandboxRunInput, context: CallContext): Promise<ExecutionResult> {
    const { files = [], folder = [], inputFiles = [], networkAllow = [] } = input;
    this.checkEgressPolicy(input.skillName, networkAllow, context);
    const secrets = await this.secretValues(input.skillName, input.secrets, context);
    const result = await this.runner.run({
      code: input.code,
      payload: input.payload,
      purpose: input.purpose,
      skillName: input.skillName,
      // Every run counts against its caller's share of the queue, test runs and steps included.
      agentId: context.caller.agentId,
      ...(files.length > 0 ? { files } : {}),
      ...(folder.length > 0 ? { folder } : {}),
      ...(inputFiles.length > 0 ? { inputFiles } : {}),
      ...(input.environment ? { environment: input.environment } : {}),
      ...(context.signal ? { signal: context.signal } : {}),
      ...(context.idempotencyKey && input.purpose === "invoke" ? { idempotencyKey: context.idempotencyKey } : {}),
      ...(secrets.size > 0 ? { secrets: Object.fromEntries(secrets) } : {}),
      ...(networkAllow.length > 0 ? { networkAllow } : {}),
    });
    const hinted = result.success ? result : { ...result, errorSummary: withNetworkHint(result.errorSummary, networkAllow) };
    return secrets.size > 0 ? new SecretRedactor(secrets).result(hinted) : hinted;
  }

  /**
   * The calling agent's values of the secrets `skillName` declares (docs/security.md#declaring-and-delivering):
   * a granted skill runs with its invoker's, never its owner's. A name the caller has not set is a
   * {@link SecretMissingError}, which nothing counts against the skill.
   */
  async secretValues(skillName: string, names: readonly string[] | undefined, context: CallContext): Promise<ReadonlyMap<string, string>> {
    if (!names || names.length === 0) return NO_SECRETS;
    const found = (await this.secrets?.valuesFor(context.caller.agentId, names)) ?? NO_SECRETS;
    const missing = names.filter((name) => !found.has(name));
    if (missing.length > 0) {
      this.logger.info(
        { skill: skillName, missing, agent: context.caller.agentId, requestId: context.requestId },
        "run refused: the caller has not set a secret the skill needs",
      );
      throw new SecretMissingError(skillName, missing);
    }
    return new Map(names.map((name) => [name, found.get(name) as string]));
  }

  /**
   * Refuses a run whose version declares a host the operator's policy does not cover now (it was
   * narrowed after the version was registered): an {@link EgressNotAllowedError} before any container
   * starts, which nothing counts against the skill (docs/security.md#declaring-hosts).
   */
  checkEgressPolicy(skillName: string, networkAllow: readonly string[], context: CallContext): void {
    if (networkAllow.length === 0) return;
    const host = uncoveredHost(networkAllow, this.egressPolicy);
    if (host === undefined) return;
    this.logger.info(
      { skill: skillName, host, agent: context.caller.agentId, requestId: context.requestId },
      "run refused: the skill declares a host the operator's egress policy no longer allows",
    );
    throw new EgressNotAllowedError(skillName, host);
  }

  /** The hosts `name` v`version` declares: the active version's from its record, an older one's from history. */
  networkAllowOf(record: SkillRecord, version: number): readonly string[] {
    return version === record.version ? record.networkAllow : (this.registry.version(record.name, version)?.networkAllow ?? []);
  }

  /** The secret names `name` v`version` declares: the active version's from its record, an older one's from history. */
  secretsOf(record: SkillRecord, version: number): readonly string[] {
    return version === record.version ? record.secrets : (this.registry.version(record.name, version)?.secrets ?? []);
  }

  /**
   * The environment a committed version runs in, if it declared packages (docs/packages.md#at-run-time).
   * A version with packages on a service without environments cannot run: refused, never run without them.
   */
  async environmentOf(packages: VersionPackages | undefined, name: string): Promise<SandboxEnvironment | undefined> {
    if (!packages || packages.environmentId === "") return undefined;
    if (!this.environments) {
      throw new FailedPreconditionError(
        `"${name}" needs packages (environment ${packages.environmentId}) and this service has no package source configured; ` +
          "set SKILL_ENGINE_WHEELHOUSE or SKILL_ENGINE_PIP_INDEX_URL (docs/packages.md)",
      );
    }
    return this.environments.environmentOf(packages);
  }

  /** What `name` v`version` declared: the active version's from its record, an older one's from history. */
  packagesOf(record: SkillRecord, version: number): VersionPackages | undefined {
    if (version === record.version) {
      return record.environmentId === "" && record.requirements.length === 0 && record.systemPackages.length === 0
        ? undefined
        : { requirements: record.requirements, systemPackages: record.systemPackages, environmentId: record.environmentId };
    }
    return this.registry.version(record.name, version)?.packages;
  }

  /**
   * Keeps routing in step; a failure is logged (the next start re-indexes), never fatal here. The
   * embedding runs on after the caller has its answer: routing waits for it, and a crash before it
   * is written is repaired at the next start (docs/performance.md#registration).
   */
  async reindex(skill: SkillRecord, exampleQueries: readonly string[] = []): Promise<void> {
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

  /** After a change of a skill's record: the mirror is rewritten and routing re-indexes the skill. */
  async afterChange(skill: SkillRecord): Promise<SkillRecord> {
    await this.mirror.flushOrLater();
    await this.reindex(skill);
    return skill;
  }

  /**
   * After an outcome changed a skill's record (an invocation's, a reported one): the mirror and
   * routing follow a status change; counters alone only schedule a coalesced mirror rewrite.
   */
  async followStatusChange(before: SkillRecord, after: SkillRecord): Promise<void> {
    if (after.status === before.status) {
      this.mirror.schedule();
      return;
    }
    this.logger.warn({ skill: after.name, from: before.status, to: after.status, reason: after.statusReason }, "skill status changed");
    await this.afterChange(after);
  }

  /**
   * Records a run's result as an invocation of `name` v`version`. A registry that cannot be written
   * now (a full disk, a lock held elsewhere, a read-only file system) loses this one record, logged,
   * and the caller still gets the result it waited for: invocations keep working while the disk is full.
   */
  recordRun(
    run: { readonly name: string; readonly version: number; readonly result: ExecutionResult },
    context: CallContext,
  ): { skill: SkillRecord | undefined; invocationId: string } {
    const { name, version, result } = run;
    try {
      const recorded = this.registry.recordInvocationWithId({
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
        // Names and sizes only, for the console's recent runs (docs/console.md#recent-runs).
        outputFiles: result.outputFiles ?? [],
        // Results come here redacted (runSandbox); the log keeps a failed run's last lines (docs/console.md#last-error).
        ...(result.success ? {} : { stderrTail: result.stderr }),
      });
      return { skill: recorded.skill, invocationId: String(recorded.invocationId) };
    } catch (error) {
      if (!(error instanceof SkillEngineError) || (error.kind !== "resource-exhausted" && error.kind !== "unavailable")) throw error;
      this.logger.error({ err: error, skill: name, success: result.success }, "could not record the invocation; its result was returned");
      return { skill: undefined, invocationId: "" };
    }
  }

  /** Takes a skill out of service: its status, then its files, the mirror and routing follow. */
  async takeOut(skill: SkillRecord, status: "retired" | "deleted", reason: string): Promise<SkillRecord> {
    const updated = this.registry.setStatus(skill.name, status, reason, this.now());
    await this.store.moveSkill(skill.name, locationOf(skill.status), status === "deleted" ? "trash" : "retired", this.now());
    return this.afterChange(updated);
  }

  /** A folder skill's versions come from its folder (docs/skill-sources.md#registration), never from an RPC that writes code. */
  refuseFolderSkill(name: string, action: string): void {
    if (this.folders?.isFolderSkill(name)) {
      throw new FailedPreconditionError(
        `cannot ${action} "${name}": it is kept as a skill folder; edit its folder (or import a new bundle)`,
      );
    }
  }

  /** What a caller's listings cover: everything for an admin, the skills it may see otherwise (docs/security.md#the-access-table). */
  listScope(context: CallContext): { visibleTo?: string; visibleToUser?: string } {
    if (context.caller.admin) return {};
    return { visibleTo: context.caller.agentId, ...(context.caller.userId === undefined ? {} : { visibleToUser: context.caller.userId }) };
  }

  /** The active version's payload validator, compiled once per version. */
  payloadValidatorFor(skill: SkillRecord): PayloadValidator {
    const key = `${skill.version}:${skill.contentHash}`;
    const cached = this.validators.get(skill.name);
    if (cached?.key === key) return cached.validate;
    const validate = compileParametersSchema(skill.parametersSchema);
    this.validators.set(skill.name, { key, validate });
    return validate;
  }

  /**
   * The active code from the canonical store, checked against the registry's hash. A file that
   * went missing or was altered on disk is restored from the immutable history.
   */
  async activeCode(skill: SkillRecord): Promise<string> {
    return (await this.readActiveCode(skill)).code;
  }

  async readActiveCode(skill: SkillRecord): Promise<{ code: string; restored: boolean }> {
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

  /**
   * The test files a version's test runs are handed (docs/files.md#test-files): the registry's list,
   * read from the canonical store without following links and checked against each file's size and
   * SHA-256. A file that is missing or altered fails the run that needs it, as missing code does.
   */
  async testFiles(name: string, version: number, location: StoreLocation = "active"): Promise<RunInputFile[]> {
    const entries = this.registry.version(name, version)?.testFiles ?? [];
    if (entries.length === 0) return [];
    const { files, problems } = await this.store.readTestFiles(name, version, entries, location);
    if (problems.length > 0) {
      throw new InternalError(
        `the test files of "${name}" v${version} are missing or altered in the canonical store (${problems.join("; ")})`,
      );
    }
    return files;
  }

  /** One version's code from its history file, checked against the registry. */
  async historyCode(name: string, version: number, expectedHash: string): Promise<string> {
    const code = await this.store.readVersion(name, version);
    if (code === undefined || contentHash(code) !== expectedHash) {
      throw new InternalError(`the history file of "${name}" v${version} is missing or altered`);
    }
    return code;
  }
}
