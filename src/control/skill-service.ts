import type { Logger } from "pino";
import { InternalError, SkillNotFoundError, SkillTestFailedError } from "../errors.js";
import type { ExecutionResult, SandboxRunner } from "../execution/index.js";
import type { CanonicalStore } from "./canonical-store.js";
import { contentHash } from "./content-hash.js";
import { KeyedMutex } from "./keyed-mutex.js";
import type { MirrorWriter } from "./mirror-writer.js";
import {
  compileParametersSchema,
  type PayloadValidator,
  type RegistrationInput,
  validateRegistration,
  validateSkillName,
} from "./request-validation.js";
import type { SkillRecord, SkillRegistry } from "./skill-registry.js";

/** Who is calling and how long they will wait; travels from the RPC down to the container. */
export interface CallContext {
  readonly caller: string;
  readonly signal?: AbortSignal;
}

/** A content-guard finding that did not block the registration. */
export interface IntakeWarning {
  readonly ruleId: string;
  readonly category: string;
  readonly severity: string;
  readonly message: string;
  readonly line: number;
}

export interface RegistrationResult {
  readonly skill: SkillRecord;
  readonly test: ExecutionResult;
  readonly normalizations: string[];
  readonly warnings: IntakeWarning[];
}

export interface InvocationResult {
  readonly result: ExecutionResult;
  readonly version: number;
}

export interface SkillWithCode {
  readonly skill: SkillRecord;
  readonly code: string;
}

/**
 * The control plane's use cases: intake (validate → TDD run → persist), invocation from the
 * canonical copy, and reads. It owns the ordering of writes that start-up reconciliation relies on.
 */
export class SkillService {
  private readonly perName = new KeyedMutex();
  private readonly validators = new Map<string, { hash: string; version: number; validate: PayloadValidator }>();

  constructor(
    private readonly registry: SkillRegistry,
    private readonly store: CanonicalStore,
    private readonly runner: SandboxRunner,
    private readonly mirror: MirrorWriter,
    private readonly logger: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async register(input: RegistrationInput, context: CallContext): Promise<RegistrationResult> {
    const valid = validateRegistration(input);
    const test = await this.runner.run({
      code: valid.code,
      payload: valid.validatePayload("test_payload", valid.testPayload),
      purpose: "test",
      skillName: valid.name,
      ...(context.signal ? { signal: context.signal } : {}),
    });
    if (!test.success) {
      this.logger.info({ skill: valid.name, cause: test.errorSummary, caller: context.caller }, "registration rejected by its test run");
      throw new SkillTestFailedError(valid.name, test.errorSummary);
    }
    // The test ran outside the lock so registrations of one name can test in parallel;
    // numbering and writes are serialized.
    const skill = await this.perName.run(valid.name, async () => {
      const version = this.registry.nextVersion(valid.name);
      await this.store.writeVersion(valid.name, version, valid.code);
      const committed = this.registry.commitVersion({
        name: valid.name,
        version,
        description: valid.description,
        parametersSchema: valid.parametersSchema,
        contentHash: contentHash(valid.code),
        at: this.now(),
      });
      await this.store.writeActive(valid.name, valid.code);
      await this.mirror.flush();
      return committed;
    });
    this.logger.info({ skill: skill.name, version: skill.version, caller: context.caller }, "skill registered");
    return { skill, test, normalizations: [], warnings: [] };
  }

  async invoke(name: string, payloadText: string, context: CallContext): Promise<InvocationResult> {
    validateSkillName(name);
    const skill = this.registry.get(name);
    if (!skill) throw new SkillNotFoundError(name);
    const payload = this.payloadValidatorFor(skill)("payload", payloadText);
    const code = await this.activeCode(skill);
    const result = await this.runner.run({
      code,
      payload,
      purpose: "invoke",
      skillName: name,
      ...(context.signal ? { signal: context.signal } : {}),
    });
    this.registry.recordInvocation({
      name,
      version: skill.version,
      at: this.now(),
      success: result.success,
      durationMs: result.durationMs,
      exitCode: result.exitCode,
      timedOut: result.timedOut,
      oomKilled: result.oomKilled,
      errorSummary: result.errorSummary,
      caller: context.caller,
    });
    this.mirror.schedule();
    return { result, version: skill.version };
  }

  async get(name: string): Promise<SkillWithCode> {
    validateSkillName(name);
    const skill = this.registry.get(name);
    if (!skill) throw new SkillNotFoundError(name);
    return { skill, code: await this.activeCode(skill) };
  }

  list(): SkillRecord[] {
    return this.registry.list();
  }

  /**
   * The active code from the canonical store, checked against the registry's hash. A file that
   * went missing or was altered on disk is restored from the immutable history.
   */
  private async activeCode(skill: SkillRecord): Promise<string> {
    const active = await this.store.readActive(skill.name);
    if (active !== undefined && contentHash(active) === skill.contentHash) return active;
    const fromHistory = await this.store.readVersion(skill.name, skill.version);
    if (fromHistory === undefined || contentHash(fromHistory) !== skill.contentHash) {
      throw new InternalError(
        `the canonical code of "${skill.name}" v${skill.version} is missing or altered and no intact copy exists in its history`,
      );
    }
    this.logger.warn({ skill: skill.name, version: skill.version }, "canonical file missing or altered; restored from history");
    await this.perName.run(skill.name, () => this.store.writeActive(skill.name, fromHistory));
    return fromHistory;
  }

  private payloadValidatorFor(skill: SkillRecord): PayloadValidator {
    const cached = this.validators.get(skill.name);
    if (cached && cached.version === skill.version && cached.hash === skill.contentHash) return cached.validate;
    const validate = compileParametersSchema(skill.parametersSchema);
    this.validators.set(skill.name, { hash: skill.contentHash, version: skill.version, validate });
    return validate;
  }
}
