/**
 * The implicit outcome signal (docs/learning.md#implicit-outcomes): in a recorded session, a call of
 * skill S immediately followed by a call of a different tool on exactly the same argument values is
 * taken as the agent retrying the same task another way, a failure signal for S. Deliberately
 * conservative: only the very next call, only when its values are the same set (nothing more,
 * nothing less, at least one value), so a pipeline that feeds S's output onward never counts.
 */

export interface ImplicitFailure {
  readonly skill: string;
  /** Index of the skill's call in the session. */
  readonly index: number;
  readonly retriedWith: string;
}

/** Every scalar leaf value of an argument value, as typed text (so 1 and "1" differ). */
export function argumentValues(value: unknown): Set<string> {
  const values = new Set<string>();
  const visit = (v: unknown): void => {
    if (v === null || v === undefined) return;
    if (Array.isArray(v)) v.forEach(visit);
    else if (typeof v === "object") Object.values(v as Record<string, unknown>).forEach(visit);
    else values.add(`${typeof v}:${String(v)}`);
  };
  visit(value);
  return values;
}

function sameSet(a: Set<string>, b: Set<string>): boolean {
  if (a.size !== b.size || a.size === 0) return false;
  for (const value of a) if (!b.has(value)) return false;
  return true;
}

/** The implicit failures of a session, for calls whose tool is one of `skills`. */
export function implicitFailures(
  calls: readonly { readonly tool: string; readonly args: unknown }[],
  skills: ReadonlySet<string>,
): ImplicitFailure[] {
  const failures: ImplicitFailure[] = [];
  for (let i = 0; i + 1 < calls.length; i++) {
    const call = calls[i] as { tool: string; args: unknown };
    const next = calls[i + 1] as { tool: string; args: unknown };
    if (!skills.has(call.tool) || next.tool === call.tool) continue;
    if (sameSet(argumentValues(call.args), argumentValues(next.args))) {
      failures.push({ skill: call.tool, index: i, retriedWith: next.tool });
    }
  }
  return failures;
}
