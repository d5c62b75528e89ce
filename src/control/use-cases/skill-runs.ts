import { errorMessage, FailedPreconditionError, InternalError, InvalidArgumentError } from "../../errors/index.js";
import type { ExecutionResult, RunInputFile } from "../../execution/index.js";
import type { CallContext } from "../call-context.js";
import {
  type CompositionDefinition,
  parseCompositionPayload,
  parseStoredDefinition,
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
    const environment = await core.environmentOf(core.packagesOf(resolved.record, resolved.version), name);
    const folderRun = await core.folders?.runOf(name, resolved.version);
    if (folderRun?.kind === "instructions") {
      throw new FailedPreconditionError(`"${name}" is an instructions-only skill: there is nothing to run; read it with GetSkillContent`);
    }
    if (folderRun) {
      const result = await core.runSandbox(
        { purpose, skillName: name, code: folderRun.launcher, payload, folder: folderRun.folder, environment, inputFiles },
        context,
      );
      return { result, steps: [], warnings: [] };
    }
    const files = await core.composition.dependencyFiles(name, resolved.declared.dependsOn);
    return {
      result: await core.runSandbox({ purpose, skillName: name, code, payload, files, environment, inputFiles }, context),
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
    const { telemetry } = request;
    const depth = request.depth ?? 1;
    const { maxDepth } = core.composition.settings;
    if (depth > maxDepth) {
      throw new FailedPreconditionError(
        `cannot run "${name}": composed skills nest deeper than ${maxDepth} (SKILL_ENGINE_COMPOSITION_MAX_DEPTH)`,
      );
    }
    // A step skill that failed its re-test against a new dependency version runs only with the caller told so.
    const warnings: string[] = [];
    // A test run's payload is the registration's test_payload (docs/composition.md#definition: nesting).
    const params = parseCompositionPayload(request.payload, telemetry ? "payload" : "test_payload");
    const run = await runComposition(
      definition,
      params,
      async (ref: SkillRef, stepPayload: string) => {
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
        const ran = await this.run(step, { payload: stepPayload, telemetry, depth: depth + 1 }, context);
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
    );
    return { ...run, warnings };
  }
}
