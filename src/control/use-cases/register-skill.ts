import { InvalidArgumentError } from "../../errors/index.js";
import type { ExecutionResult } from "../../execution/index.js";
import { requireAdmin, validateNetworkAllow, validateSecretNames } from "../access/index.js";
import type { CallContext } from "../call-context.js";
import { isDefinitionText } from "../composition/index.js";
import type { OnDuplicate, SimilarSkillReport } from "../duplicate-screen.js";
import type { RoutingGateReport } from "../routing-gate.js";
import {
  type IntakeWarning,
  localModulesOf,
  missingDependencyWarnings,
  type PreparedCode,
  type RegistrationInput,
  validateInputFiles,
  validateRegistration,
} from "../intake/index.js";
import { isLive, type SkillRecord, type SkillVisibility } from "../registry/index.js";
import { contentHash } from "../store/index.js";
import type { DependentRetest, DependentRetests, HiddenRetests } from "./dependent-retests.js";
import { isActiveVersion } from "./identical-registration.js";
import { prepareEnvironment } from "./package-environment.js";
import { accessForRegistration, checkExampleQueries, refuseKindChange, screenDuplicates } from "./registration-rules.js";
import type { SkillCore } from "./skill-core.js";
import type { EarlyTest, VersionGate } from "./version-gate.js";

/** RegisterSkill's input: the skill, and what the request says about routing, access and dependencies. */
export interface RegisterSkillInput extends RegistrationInput {
  /** Queries routing learns the skill from (docs/routing.md#example-queries). @default [] */
  readonly exampleQueries?: readonly string[];
  /** Undefined: private for a new skill, unchanged for an existing one. */
  readonly visibility?: SkillVisibility | undefined;
  /** Skills whose code is placed beside this one (docs/composition.md#dependencies). @default [] */
  readonly dependsOn?: readonly string[];
  /** An operator's system skill (docs/security.md#system-skills); admins only. @default false */
  readonly system?: boolean;
  /** @default "warn" */
  readonly onDuplicate?: OnDuplicate;
  /** PEP 508 requirement specifiers the skill's imports need (docs/packages.md). @default [] */
  readonly requirements?: readonly string[];
  /** Debian packages the skill needs (docs/packages.md). @default [] */
  readonly systemPackages?: readonly string[];
  /** Files for the test run, under /sandbox/in/ (docs/files.md#test-files). @default [] */
  readonly testFiles?: readonly { readonly path: string; readonly content: Uint8Array }[];
  /** Names of the caller's secrets the skill reads (docs/security.md#declaring-and-delivering). @default [] */
  readonly secrets?: readonly string[];
  /** Hosts its runs may reach, within the operator's policy (docs/security.md#declaring-hosts). @default [] */
  readonly networkAllow?: readonly string[];
}

/** The outcome of a gated change of code (registration or patch). */
export interface RegistrationResult {
  readonly skill: SkillRecord;
  /** The test run that admitted the version; absent exactly when {@link RegistrationResult.unchanged}. */
  readonly test?: ExecutionResult;
  /**
   * The registration was the active version as it is (docs/skill-lifecycle.md#identical-registrations):
   * `skill` is that version, and nothing was run, written or re-tested.
   */
  readonly unchanged?: true;
  readonly normalizations: string[];
  readonly warnings: IntakeWarning[];
  /** Unpinned dependents the caller may see, re-tested against the new version (docs/composition.md#re-tests). */
  readonly dependentsRetested?: DependentRetest[];
  /** The re-tested dependents the caller may not see: counted, never named (docs/security.md#dependents-you-cannot-see). */
  readonly hiddenDependentsRetested?: HiddenRetests;
  /** Skills the caller can see that resemble this one (docs/learning.md#near-duplicates). */
  readonly similarSkills?: SimilarSkillReport[];
  /** How the skill ranks for its example queries and whose queries it would take (docs/routing.md#the-routing-gate). */
  readonly routingGate?: RoutingGateReport;
}

/**
 * RegisterSkill: a plain skill, or a new version of one the caller may change, through the gate
 * (validate → intake → test run → commit). The slow steps overlap (docs/performance.md#registration):
 * the duplicate screen's model run, the early test run on the code as sent, and the staging of
 * the new version's files all start before the steps they would otherwise wait for.
 */
export class RegisterSkill {
  constructor(
    private readonly core: SkillCore,
    private readonly gate: VersionGate,
    private readonly retests: DependentRetests,
  ) {}

  async register(input: RegisterSkillInput, context: CallContext): Promise<RegistrationResult> {
    const { core, gate } = this;
    const { exampleQueries = [], visibility, dependsOn = [], system = false, onDuplicate = "warn" } = input;
    const declaredPackages = { requirements: input.requirements ?? [], systemPackages: input.systemPackages ?? [] };
    // A system skill is an operator's decision (docs/security.md#system-skills).
    if (system) requireAdmin(context.caller, "registering a system skill");
    const valid = validateRegistration(input);
    const secrets = validateSecretNames("secrets", input.secrets ?? []);
    const networkAllow = validateNetworkAllow("network_allow", input.networkAllow ?? [], core.egressPolicy);
    if (isDefinitionText(valid.code)) {
      throw new InvalidArgumentError("code", "is a composed skill's definition; register it with RegisterComposedSkill");
    }
    // Checked before the test run so a taken name costs no sandbox run; checked again under the
    // lock because the name may be taken meanwhile.
    const existing = core.registry.get(valid.name);
    accessForRegistration(existing, { name: valid.name, visibility }, context.caller);
    refuseKindChange(core, existing, "plain");
    // The test run uses the registering agent's secrets: one it has not set refuses the registration
    // before anything is built or run (docs/security.md#declaring-and-delivering).
    await core.secretValues(valid.name, secrets, context);
    // The near-duplicate screen's model run (the description's embedding) is the slowest step of
    // a registration: it starts first, beside intake and the test run (docs/performance.md#registration).
    core.duplicates?.anticipate?.(valid.description);
    checkExampleQueries(exampleQueries);
    const declared = core.composition.preflightPlain(valid.name, dependsOn, context.caller);
    const loadingFiles = core.composition.dependencyFiles(valid.name, declared);
    loadingFiles.catch(() => undefined); // awaited below, after intake's verdict
    // The environment of its packages is built (or found) beside intake; the test run waits for it.
    const environment = prepareEnvironment(core, declaredPackages);
    environment.catch(() => undefined); // awaited below, after intake's verdict
    // validateRegistration has checked it against the schema already: this cannot throw.
    const testPayload = valid.validatePayload("test_payload", valid.testPayload);
    const inputFiles = validateInputFiles("test_files", input.testFiles ?? [], core.inputFileLimits);
    const intake = core.intake.begin(valid.code, { declaredSecrets: secrets, declaresNetwork: networkAllow.length > 0 });
    // Code the guard passes as sent starts its test run while the parser checks it; "reject"
    // screens before any run, so a refused near-duplicate costs none (docs/performance.md#registration).
    const needsPackages = declaredPackages.requirements.length > 0 || declaredPackages.systemPackages.length > 0;
    // The active code sent again is most likely an identical registration, which runs nothing (below).
    const resent = existing !== undefined && isLive(existing.status) && existing.contentHash === contentHash(valid.code);
    const early: EarlyTest | undefined =
      intake.runnableAsSent && onDuplicate === "warn" && !needsPackages && !resent
        ? gate.startEarlyTest(
            { skillName: valid.name, code: valid.code, payload: testPayload, files: loadingFiles, inputFiles, secrets, networkAllow },
            context,
          )
        : undefined;
    let prepared: PreparedCode;
    try {
      prepared = await intake.prepared;
    } catch (error) {
      early?.discard();
      throw error;
    }
    // The guard's warnings and the dependency scan's (warn only): its dependency skills are importable by
    // name (docs/packages.md#the-dependency-scan).
    const warningsWith = (files: Awaited<typeof loadingFiles>) => [
      ...prepared.warnings,
      ...missingDependencyWarnings({
        imports: prepared.imports,
        ...declaredPackages,
        localModules: localModulesOf(files.map((f) => f.name)),
      }),
    ];
    const same = await this.identical(
      { existing, valid, prepared, testPayload, declared, environment, inputFiles, secrets, networkAllow, visibility, system },
      context,
    );
    if (same) {
      early?.discard();
      const files = await loadingFiles;
      await core.reindex(same, exampleQueries);
      return {
        skill: same,
        unchanged: true,
        normalizations: [...valid.normalizations, ...prepared.normalizations],
        warnings: warningsWith(files),
      };
    }
    // The routing gate ranks the skill for its example queries while the test runs; it reads
    // the indexes and writes nothing, so a failed test only discards its report.
    const gating =
      exampleQueries.length > 0 && core.routingGate
        ? core.routingGate.report({ name: valid.name, description: valid.description }, exampleQueries, context.caller)
        : undefined;
    gating?.catch(() => undefined); // observed below; a failed test run must not leave it unhandled
    // "reject" screens here, before any run; "warn" screens while the test runs (below).
    const screened = { name: valid.name, description: valid.description, code: prepared.code };
    const rejectScreened = onDuplicate === "reject" ? await screenDuplicates(core, { skill: screened, onDuplicate }, context) : undefined;
    const files = await loadingFiles;
    const built = await environment;
    // The early run is kept when normalization left the code as sent (the usual case); otherwise
    // the code that passed intake is what runs. The run starts before the screen and the staging,
    // so that what they do before their first await overlaps the sandbox's work.
    let run: Promise<ExecutionResult>;
    if (early && prepared.code === early.code) run = early.result;
    else {
      early?.discard();
      run = core.runSandbox(
        {
          purpose: "test",
          skillName: valid.name,
          code: prepared.code,
          payload: testPayload,
          files,
          environment: built?.environment,
          inputFiles,
          secrets,
          networkAllow,
        },
        context,
      );
    }
    const testing = run.then((result) => gate.verdict(valid.name, result, context, declaredPackages));
    const screening = rejectScreened
      ? Promise.resolve(rejectScreened)
      : screenDuplicates(core, { skill: screened, onDuplicate: "warn" }, context);
    screening.catch(() => undefined); // observed below; a failed test run must not leave it unhandled
    // The new version's files are written (and fsynced) while its test runs; a failed test
    // discards them (docs/performance.md#registration).
    const staged = gate.stage(valid.name, prepared.code);
    let test: ExecutionResult;
    try {
      test = await testing;
    } catch (error) {
      await staged.discard();
      throw error;
    }
    // The test ran outside the lock so registrations of one name can test in parallel;
    // numbering and writes are serialized.
    const skill = await core
      .locked(valid.name, async () => {
        const committed = await gate.commit({
          name: valid.name,
          code: prepared.code,
          description: valid.description,
          parametersSchema: valid.parametersSchema,
          testPayload,
          origin: "register",
          access: accessForRegistration(core.registry.get(valid.name), { name: valid.name, visibility }, context.caller),
          declared: { kind: "plain", dependsOn: declared },
          packages: built?.packages,
          // Kept with the version, like its test payload: every later test run of it gets them (docs/files.md#test-files).
          testFiles: inputFiles,
          secrets,
          networkAllow,
          staged,
        });
        return system && !committed.system ? core.registry.setSystem(committed.name, true, core.now()) : committed;
      })
      .catch(async (error: unknown) => {
        // Whatever was not put in place is removed (a file already renamed is not touched).
        await staged.discard();
        throw error;
      });
    // A "warn" screen decides nothing, so the commit did not wait for it; the answer does. The
    // version is committed by now: a screen that failed is logged and reports nothing.
    const similarSkills = await screening.catch((error: unknown) => {
      core.logger.error({ err: error, skill: skill.name }, "could not look for near-duplicates; registered without");
      return [];
    });
    // Awaited before the skill's own indexing is handed over, so the ranks are against the catalog as it was.
    const routingGate = await gating?.catch((error: unknown) => {
      core.logger.error({ err: error, skill: skill.name }, "could not rank the example queries; registered without a routing report");
      return undefined;
    });
    if (system) await core.mirror.flushOrLater();
    await core.reindex(skill, exampleQueries);
    const { dependentsRetested, hiddenDependentsRetested } = await this.retests.after(skill, context);
    core.logger.info(
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
      warnings: warningsWith(files),
      dependentsRetested,
      hiddenDependentsRetested,
      similarSkills,
      ...(routingGate ? { routingGate } : {}),
    };
  }

  /**
   * The existing skill when the registration is its active version as it is
   * (docs/skill-lifecycle.md#identical-registrations), else undefined. Nothing is run or written
   * for it: no test run, no version, no re-tests, and no "skill registered" event.
   */
  private async identical(
    request: {
      readonly existing: SkillRecord | undefined;
      readonly valid: { readonly name: string; readonly description: string; readonly parametersSchema: string };
      readonly prepared: PreparedCode;
      readonly testPayload: string;
      readonly declared: readonly string[];
      readonly environment: ReturnType<typeof prepareEnvironment>;
      readonly inputFiles: readonly { readonly path: string; readonly content: Uint8Array }[];
      readonly secrets: readonly string[];
      readonly networkAllow: readonly string[];
      readonly visibility: SkillVisibility | undefined;
      readonly system: boolean;
    },
    context: CallContext,
  ): Promise<SkillRecord | undefined> {
    const { existing, valid, prepared } = request;
    // Cheap checks first: the environment is awaited only for the active code sent again.
    if (!existing || !isLive(existing.status) || existing.contentHash !== contentHash(prepared.code)) return undefined;
    const declarations = {
      name: valid.name,
      kind: "plain" as const,
      code: prepared.code,
      description: valid.description,
      parametersSchema: valid.parametersSchema,
      testPayload: request.testPayload,
      dependsOn: request.declared,
      packages: (await request.environment)?.packages,
      testFiles: request.inputFiles,
      secrets: request.secrets,
      networkAllow: request.networkAllow,
      visibility: request.visibility,
      system: request.system,
    };
    // Under the name's lock: a registration of the same name committing meanwhile is seen.
    const same = await this.core.locked(valid.name, async () => {
      const current = this.core.registry.get(valid.name);
      return isActiveVersion(this.core, current, declarations, context.caller) ? current : undefined;
    });
    if (same) {
      this.core.logger.info(
        { skill: same.name, version: same.version, agent: context.caller.agentId, requestId: context.requestId },
        "skill registration unchanged: the active version already is this one",
      );
    }
    return same;
  }
}
