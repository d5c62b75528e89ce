import type { CodeIntake, IntakeInProgress, IntakeOptions, PreparedCode } from "./code-intake.js";
import { type GuardReport, GuardViolationError, scanSkillCode } from "./content-guard.js";
import { GUARD_RULES } from "./guard-rules.js";
import { type NormalizedCode, normalizeSkillCode } from "./normalize-code.js";
import type { ImportedModule, PythonSyntaxChecker } from "./python-syntax.js";

/**
 * `enforce` rejects code with a dangerous finding; `warn` only reports it (for operators and test
 * suites that deliberately register hostile code to exercise the sandbox, the real boundary).
 */
export type ContentGuardMode = "enforce" | "warn";

/**
 * Intake (docs/skill-lifecycle.md#registration): normalize first (so entity-encoding cannot hide anything
 * from the guard), then scan the whole normalized code. Nothing touches disk before this passes.
 */
export class NormalizingGuardedIntake implements CodeIntake {
  constructor(
    private readonly checker: PythonSyntaxChecker,
    private readonly guardMode: ContentGuardMode = "enforce",
  ) {}

  prepare(rawCode: string, options: IntakeOptions = {}): Promise<PreparedCode> {
    return this.begin(rawCode, options).prepared;
  }

  begin(rawCode: string, options: IntakeOptions = {}): IntakeInProgress {
    const normalizing = normalizeSkillCode(rawCode, this.checker);
    normalizing.catch(() => undefined); // awaited in finish
    // While the parser process checks the code, the guard scans it as sent: for clean code (the
    // usual case) that is exactly what normalization returns, so the scan is not repeated; code
    // that normalization changed is scanned again as changed (docs/performance.md#registration).
    const asSent = scanSkillCode(rawCode, GUARD_RULES, options);
    const prepared = this.finish(rawCode, asSent, normalizing, options);
    prepared.catch(() => undefined); // the caller's to observe; never unhandled meanwhile
    return { runnableAsSent: this.guardMode === "warn" || asSent.dangerous.length === 0, prepared };
  }

  private async finish(
    rawCode: string,
    asSent: GuardReport,
    normalizing: Promise<NormalizedCode>,
    options: IntakeOptions,
  ): Promise<PreparedCode> {
    const normalized = await normalizing;
    const report = normalized.code === rawCode ? asSent : scanSkillCode(normalized.code, GUARD_RULES, options);
    if (this.guardMode === "enforce" && report.dangerous.length > 0) throw new GuardViolationError(report);
    const reported = this.guardMode === "enforce" ? report.cautions : report.findings;
    return {
      code: normalized.code,
      normalizations: [...normalized.normalizations],
      warnings: reported.map((finding) => ({
        ruleId: finding.ruleId,
        category: finding.category,
        severity: finding.severity,
        message: finding.message,
        line: finding.line,
      })),
      imports: normalized.imports,
    };
  }

  async listImports(code: string): Promise<readonly ImportedModule[]> {
    const verdict = await this.checker.check(code);
    return verdict.ok ? (verdict.imports ?? []) : [];
  }

  close(): Promise<void> {
    return this.checker.close();
  }
}
