import { SkillTestFailedError } from "../../errors/index.js";
import type { ExecutionResult } from "../../execution/index.js";
import type { CallContext } from "../call-context.js";
import { definitionFromInput, serializeDefinition, type StepInput, type StepOutcome } from "../composition/index.js";
import type { OnDuplicate, SimilarSkillReport } from "../duplicate-screen.js";
import { validateRegistration } from "../intake/index.js";
import type { SkillRecord, SkillVisibility } from "../registry/index.js";
import { evictComposedPastCap } from "./composed-eviction.js";
import { isActiveVersion } from "./identical-registration.js";
import { accessForRegistration, checkExampleQueries, refuseKindChange, screenDuplicates } from "./registration-rules.js";
import type { SkillCore } from "./skill-core.js";
import type { SkillRuns } from "./skill-runs.js";
import type { VersionGate } from "./version-gate.js";

/** RegisterComposedSkill's input. */
export interface ComposedRegistrationInput {
  readonly name: string;
  readonly description: string;
  readonly parametersSchema: string;
  readonly steps: readonly StepInput[];
  readonly output: string;
  readonly testPayload: string;
  /** @default [] */
  readonly exampleQueries?: readonly string[];
  /** Undefined: private for a new skill, unchanged for an existing one. */
  readonly visibility?: SkillVisibility | undefined;
  /** @default "warn" */
  readonly onDuplicate?: OnDuplicate;
}

export interface ComposedRegistrationResult {
  readonly skill: SkillRecord;
  /** The test run and its steps; absent exactly when {@link ComposedRegistrationResult.unchanged}. */
  readonly test?: ExecutionResult;
  readonly steps?: StepOutcome[];
  /**
   * The registration was the active version as it is (docs/skill-lifecycle.md#identical-registrations):
   * `skill` is that version, and nothing was run, written or evicted.
   */
  readonly unchanged?: true;
  /** Composed skills retired with reason "evicted" to keep the per-agent limit. */
  readonly evicted: string[];
  readonly similarSkills?: SimilarSkillReport[];
}

/**
 * RegisterComposedSkill (docs/composition.md): a composed skill, or a new version of one. The
 * pre-flight, then the TDD gate (the whole composition on `test_payload`), then the commit; a new
 * composed skill past the per-agent limit evicts the least used one.
 */
export class RegisterComposedSkill {
  constructor(
    private readonly core: SkillCore,
    private readonly gate: VersionGate,
    private readonly runs: SkillRuns,
  ) {}

  async register(input: ComposedRegistrationInput, context: CallContext): Promise<ComposedRegistrationResult> {
    const { core } = this;
    const { exampleQueries = [], visibility } = input;
    const definition = definitionFromInput(input.steps, input.output);
    const code = serializeDefinition(definition);
    const valid = validateRegistration({ ...input, code });
    const existing = core.registry.get(valid.name);
    accessForRegistration(existing, { name: valid.name, visibility }, context.caller);
    refuseKindChange(core, existing, "composed");
    checkExampleQueries(exampleQueries);
    const dependsOn = core.composition.preflightComposed(valid.name, definition, valid.parametersSchema, context.caller);
    const testPayload = valid.validatePayload("test_payload", valid.testPayload);
    // The active definition sent again runs nothing and writes nothing (docs/skill-lifecycle.md#identical-registrations).
    const same = await core.locked(valid.name, async () => {
      const current = core.registry.get(valid.name);
      const declarations = { ...valid, kind: "composed" as const, code, testPayload, dependsOn, visibility };
      return isActiveVersion(core, current, declarations, context.caller) ? current : undefined;
    });
    if (same) {
      core.logger.info(
        { skill: same.name, version: same.version, agent: context.caller.agentId, requestId: context.requestId },
        "composed skill registration unchanged: the active version already is this one",
      );
      await core.reindex(same, exampleQueries);
      return { skill: same, unchanged: true, evicted: [] };
    }
    const similarSkills = await screenDuplicates(
      core,
      { skill: { name: valid.name, description: valid.description, code }, onDuplicate: input.onDuplicate ?? "warn" },
      context,
    );
    const test = await this.runs.composed({ name: valid.name, definition }, { payload: testPayload, telemetry: false }, context);
    if (!test.result.success) {
      core.logger.info(
        { skill: valid.name, cause: test.result.errorSummary, requestId: context.requestId },
        "composition rejected by its test run",
      );
      throw new SkillTestFailedError(valid.name, test.result.errorSummary);
    }
    const skill = await core.locked(valid.name, () =>
      this.gate.commit({
        name: valid.name,
        code,
        description: valid.description,
        parametersSchema: valid.parametersSchema,
        testPayload,
        origin: "register",
        access: accessForRegistration(core.registry.get(valid.name), { name: valid.name, visibility }, context.caller),
        declared: { kind: "composed", dependsOn },
      }),
    );
    await core.reindex(skill, exampleQueries);
    const evicted = await evictComposedPastCap(core, skill, context);
    core.logger.info(
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
}
