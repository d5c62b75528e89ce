import { errorMessage, FailedPreconditionError, InternalError, InvalidArgumentError } from "../../errors/index.js";
import type { ExecutionResult, RunInputFile } from "../../execution/index.js";
import type { Caller } from "../../identity/index.js";
import type { CallContext } from "../call-context.js";
import {
  type CompositionDefinition,
  parseCompositionPayload,
  parseStoredDefinition,
  refuseStepsPaths,
  type ResolvedSkill,
  runComposition,
  type SkillRef,
  StepPayloadError,
  type StepOutcome,
} from "../composition/index.js";
import { compileParametersSchema } from "../intake/index.js";
import type { SkillCore } from "./skill-core.js";

/** What one run of a skill produced: its result, a composition's steps, and warnings the caller must see. */
export interface SkillRun {
  readonly result: ExecutionResult;
  readonly steps: StepOutcome[];
  readonly warnings: string[];
}

/**
 * How a resolved version runs: a plain skill in a sandbox with its dependencies' code beside it, a
 * folder skill with its folder, a composed skill step by step (docs/composition.md#running). With
 * `telemetry` every step skill's invocation is recorded (the caller records the skill itself);
 * test runs and re-tests record nothing. `depth` counts the nesting of composed skills.
 */
export interface RunRequest {
  readonly payload: string;
  /** The caller's files, under /sandbox/in/ (docs/files.md#input-files); validated. @default [] */
  readonly inputFiles?: readonly RunInputFile[];
  readonly telemetry: boolean;
  /** @default 1 */
  readonly depth?: number;
}

/** The secret names one skill of a run declares (docs/security.md#declaring-and-delivering). */
export interface DeclaredSecrets {
  readonly skill: string;
  readonly names: readonly string[];
}

/** Runs resolved skill versions for invocations, composed registrations' test runs and dependents' re-tests. */
export class SkillRuns {
  constructor(private readonly core: SkillCore) {}

  async run(resolved: ResolvedSkill, request: RunRequest, context: CallContext): Promise<SkillRun> {
    const { core } = this;
    const { payload, telemetry, inputFiles = [] } = request;
    // The active version through activeCode, which also repairs an altered canonical file; a pinned one from history.
    const code =
      resolved.version === resolved.record.version ? await core.activeCode(resolved.record) : await core.composition.readCode(resolved);
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
      return this.composed({ name, definition }, request, context);
    }
    const purpose = telemetry ? "invoke" : "test";
    // The caller's values of the version's secrets go with the run (docs/security.md#declaring-and-delivering).
    const secrets = core.secretsOf(resolved.record, resolved.version);
    // And the hosts it declares, if the operator's policy still covers them (docs/security.md#declaring-hosts).
    const networkAllow = core.networkAllowOf(resolved.record, resolved.version);
    const environment = await core.environmentOf(core.packagesOf(resolved.record, resolved.version), name);
    const folderRun = await core.folders?.runOf(name, resolved.version);
    if (folderRun?.kind === "instructions") {
      throw new FailedPreconditionError(`"${name}" is an instructions-only skill: there is nothing to run; read it with GetSkillContent`);
    }
    const files = await core.composition.dependencyFiles(name, resolved.declared.dependsOn);
    if (folderRun) {
      // Its declared dependencies' code sits beside the launcher, as for a plain skill (docs/skill-sources.md#dependencies).
      const result = await core.runSandbox(
        {
          purpose,
          skillName: name,
          code: folderRun.launcher,
          payload,
          folder: folderRun.folder,
          files,
          environment,
          inputFiles,
          secrets,
          networkAllow,
        },
        context,
      );
      return { result, steps: [], warnings: [] };
    }
    return {
      result: await core.runSandbox(
        { purpose, skillName: name, code, payload, files, environment, inputFiles, secrets, networkAllow },
        context,
      ),
      steps: [],
      warnings: [],
    };
  }

  /** A composition's steps, each a full invocation of its skill (docs/composition.md#running). */
  async composed(
    skill: { readonly name: string; readonly definition: CompositionDefinition },
    request: RunRequest,
    context: CallContext,
  ): Promise<SkillRun> {
    const { core } = this;
    const { name, definition } = skill;
    const { telemetry, inputFiles = [] } = request;
    const depth = request.depth ?? 1;
    // The caller's files may not take the place of earlier steps' (docs/composition.md#files); a
    // nested composition is handed those on purpose.
    if (depth === 1) refuseStepsPaths(telemetry ? "files" : "test_files", inputFiles);
    const { maxDepth } = core.composition.settings;
    if (depth > maxDepth) {
      throw new FailedPreconditionError(
        `cannot run "${name}": composed skills nest deeper than ${maxDepth} (SKILL_ENGINE_COMPOSITION_MAX_DEPTH)`,
      );
    }
    // Every step's secrets, nested compositions' too, before the first step runs: one the caller has
    // not set refuses the whole run before any container starts (docs/security.md#declaring-and-delivering).
    if (depth === 1) {
      for (const declared of await this.stepSecrets(definition, context.caller)) {
        await core.secretValues(declared.skill, declared.names, context);
      }
    }
    // A step skill that failed its re-test against a new dependency version runs only with the caller told so.
    const warnings: string[] = [];
    // A test run's payload is the registration's test_payload (docs/composition.md#definition: nesting).
    const params = parseCompositionPayload(request.payload, telemetry ? "payload" : "test_payload");
    const run = await runComposition(
      definition,
      params,
      async (ref: SkillRef, stepPayload: string, stepFiles: readonly RunInputFile[]) => {
        const step = core.composition.resolve(ref, context.caller, `cannot run "${name}": its step skill`);
        try {
          // The active version's validator is cached; a pinned version's schema is compiled for the call.
          const validate =
            step.version === step.record.version
              ? core.payloadValidatorFor(step.record)
              : compileParametersSchema(core.registry.version(ref.name, step.version)?.parametersSchema ?? '{"type":"object"}');
          validate("payload", stepPayload);
        } catch (error) {
          if (error instanceof InvalidArgumentError) throw new StepPayloadError(`its payload does not fit "${ref.name}": ${error.message}`);
          throw error;
        }
        const ran = await this.run(step, { payload: stepPayload, inputFiles: stepFiles, telemetry, depth: depth + 1 }, context);
        for (const warning of [...core.composition.retestWarnings(step.record), ...ran.warnings]) {
          if (!warnings.includes(warning)) warnings.push(warning);
        }
        if (telemetry) {
          const updated = core.recordRun({ name: step.record.name, version: step.version, result: ran.result }, context).skill;
          if (updated) await core.followStatusChange(step.record, updated);
          else core.mirror.schedule();
        }
        return { skill: step.record.name, version: step.version, result: ran.result };
      },
      core.composition.conditions,
      { inputs: inputFiles, limits: core.inputFileLimits },
    );
    for (const warning of run.warnings) if (!warnings.includes(warning)) warnings.push(warning);
    return { result: run.result, steps: run.steps, warnings };
  }

  /**
   * The secrets a run of `resolved` needs, skill by skill: a plain or folder skill's version's own, a
   * composition's steps' (nested ones included, each resolved as `caller` would run it). A step that
   * cannot be resolved or read is left out: its run reports it.
   */
  async secretsNeeded(resolved: ResolvedSkill, caller: Caller): Promise<DeclaredSecrets[]> {
    const { core } = this;
    if (resolved.declared.kind !== "composed") {
      const names = core.secretsOf(resolved.record, resolved.version);
      return names.length > 0 ? [{ skill: resolved.record.name, names }] : [];
    }
    const definition = await core.composition
      .readCode(resolved)
      .then(parseStoredDefinition)
      .catch(() => undefined);
    return definition ? this.stepSecrets(definition, caller) : [];
  }

  private async stepSecrets(definition: CompositionDefinition, caller: Caller, depth = 1): Promise<DeclaredSecrets[]> {
    const { core } = this;
    const needed: DeclaredSecrets[] = [];
    for (const step of definition.steps) {
      let resolved: ResolvedSkill;
      try {
        resolved = core.composition.resolve(step.skill, caller, "check the secrets of");
      } catch {
        continue;
      }
      if (resolved.declared.kind !== "composed") needed.push(...(await this.secretsNeeded(resolved, caller)));
      else if (depth < core.composition.settings.maxDepth) {
        const nested = await core.composition
          .readCode(resolved)
          .then(parseStoredDefinition)
          .catch(() => undefined);
        if (nested) needed.push(...(await this.stepSecrets(nested, caller, depth + 1)));
      }
    }
    return needed;
  }
}
