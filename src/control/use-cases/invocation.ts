import { InvalidArgumentError } from "../../errors/index.js";
import type { ExecutionResult } from "../../execution/index.js";
import { disabledError, pinnedVersionFor } from "../access/index.js";
import type { CallContext } from "../call-context.js";
import type { StepOutcome } from "../composition/index.js";
import { compileParametersSchema, validateInputFiles } from "../intake/index.js";
import type { SkillRecord } from "../registry/index.js";
import type { SkillCore } from "./skill-core.js";
import { liveSkill } from "./skill-lookup.js";
import type { SkillRuns } from "./skill-runs.js";

/** What an idempotency key may be: printable ASCII, short enough for a log line. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;

/** InvokeSkill's input; the idempotency key travels in the {@link CallContext}. */
export interface InvokeInput {
  readonly name: string;
  /** JSON text, validated against the skill's parameters schema. */
  readonly payload: string;
  /** The RouteSkills answer this invocation follows, if any: the route is credited with its outcome. @default "" */
  readonly routeId?: string;
  /** Files for the run, under /sandbox/in/ (docs/files.md#input-files). @default [] */
  readonly files?: readonly { readonly path: string; readonly content: Uint8Array }[];
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

/**
 * InvokeSkill: a plain, folder or composed skill run on the caller's payload. A skill that fails
 * is an in-band result, never an error; every run is recorded (telemetry) and, when it followed a
 * route, credited to that route (docs/routing.md#learning-from-use).
 */
export class Invocation {
  constructor(
    private readonly core: SkillCore,
    private readonly runs: SkillRuns,
  ) {}

  async invoke(input: InvokeInput, context: CallContext): Promise<InvocationResult> {
    const { core } = this;
    const { name, routeId = "" } = input;
    if (context.idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(context.idempotencyKey)) {
      throw new InvalidArgumentError("idempotency_key", "must be 1 to 200 printable ASCII characters (no spaces)");
    }
    const skill = liveSkill(core.lookup.visible(name, context.caller), "invoke");
    if (!skill.enabled) throw disabledError(skill, "invoke");
    // A grant with a version pins the grantee to it (docs/security.md#pinned-grants).
    const pinned = pinnedVersionFor(skill, context.caller);
    const validate =
      pinned === undefined || pinned === skill.version
        ? core.payloadValidatorFor(skill)
        : compileParametersSchema(core.registry.version(name, pinned)?.parametersSchema ?? skill.parametersSchema);
    const payload = validate("payload", input.payload);
    const inputFiles = validateInputFiles("files", input.files ?? [], core.inputFileLimits);
    const resolved = core.composition.resolve(pinned === undefined ? { name } : { name, version: pinned }, context.caller, "invoke");
    const { result, steps, warnings } = await this.runs.run(resolved, { payload, inputFiles, telemetry: true }, context);
    const recorded = core.recordRun({ name, version: resolved.version, result }, context);
    const updated = recorded.skill;
    if (updated) await core.followStatusChange(skill, updated);
    else core.mirror.schedule();
    if (routeId !== "" && updated) await this.creditRoute(routeId, updated, result.success, context);
    return {
      result,
      version: resolved.version,
      steps,
      // What the egress gateway refused or cut off follows the file warnings (docs/security.md#egress).
      warnings: [...core.composition.retestWarnings(skill), ...warnings, ...(result.fileWarnings ?? []), ...(result.networkWarnings ?? [])],
      invocationId: recorded.invocationId,
    };
  }

  /** The route the invocation followed learns from its outcome; routing's failures are logged, never the caller's. */
  private async creditRoute(routeId: string, skill: SkillRecord, success: boolean, context: CallContext): Promise<void> {
    const { indexer, logger } = this.core;
    if (!indexer) return;
    const agentId = context.caller.agentId;
    try {
      await indexer.credit(routeId, skill, success, agentId);
    } catch (error) {
      logger.error({ err: error, skill: skill.name, routeId }, "could not record routing feedback");
    }
    await indexer.applied?.(routeId, skill, success, agentId).catch((error: unknown) => {
      logger.error({ err: error, skill: skill.name, routeId }, "could not count the routed invocation");
    });
  }
}
