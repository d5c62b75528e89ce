import type { ImportedModule } from "./python-syntax.js";

/** A finding that did not block the code: a content-guard caution, or the dependency scan's warning (docs/packages.md#the-dependency-scan). */
export interface IntakeWarning {
  readonly ruleId: string;
  readonly category: string;
  readonly severity: string;
  readonly message: string;
  readonly line: number;
}

/** Code that passed intake: normalized, scanned, ready for the test run. */
export interface PreparedCode {
  readonly code: string;
  /** What normalization changed, for the calling agent to learn from. */
  readonly normalizations: string[];
  readonly warnings: IntakeWarning[];
  /** What the code imports, for the dependency scan (docs/packages.md#the-dependency-scan). */
  readonly imports: readonly ImportedModule[];
}

/** What intake takes into account beside the code. */
export interface IntakeOptions {
  /** Secret names the skill declares: the content guard does not flag reading them (docs/security.md#declaring-and-delivering). @default [] */
  readonly declaredSecrets?: readonly string[];
  /** The skill declares hosts (docs/security.md#declaring-hosts): the guard does not flag sending a declared secret. @default false */
  readonly declaresNetwork?: boolean;
}

/**
 * The gate every path that writes skill code goes through before anything touches disk
 * (register, patch, migration): normalization, then the content guard.
 * Throws `InvalidArgumentError` (field `code`) with a specific diagnosis or the guard rule.
 */
export interface CodeIntake {
  prepare(rawCode: string, options?: IntakeOptions): Promise<PreparedCode>;
  /**
   * {@link prepare} with a head start: `runnableAsSent` says at once (before the parser has
   * answered) whether the content guard lets the code through exactly as sent, so a caller may
   * start that code's test run while the syntax check goes on. The run is the caller's to discard
   * when `prepared` rejects or returns other code (docs/performance.md#registration).
   */
  begin(rawCode: string, options?: IntakeOptions): IntakeInProgress;
  /**
   * What code that does not pass through {@link prepare} imports (a folder skill's files): none
   * when it does not parse. Nothing in it is executed.
   */
  listImports(code: string): Promise<readonly ImportedModule[]>;
  close(): Promise<void>;
}

/** See {@link CodeIntake.begin}. */
export interface IntakeInProgress {
  readonly runnableAsSent: boolean;
  readonly prepared: Promise<PreparedCode>;
}
