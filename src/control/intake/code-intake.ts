/** A content-guard finding that did not block the code (severity "caution"). */
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
}

/**
 * The gate every path that writes skill code goes through before anything touches disk
 * (register, patch, migration): normalization, then the content guard.
 * Throws `InvalidArgumentError` (field `code`) with a specific diagnosis or the guard rule.
 */
export interface CodeIntake {
  prepare(rawCode: string): Promise<PreparedCode>;
  close(): Promise<void>;
}
