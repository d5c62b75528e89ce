import { type DeclaredPackageNames, declaredProvider } from "./dependency-scan.js";
import { providerOf } from "./import-aliases.js";

/**
 * The one-line cause Python gives an import of a module that is not installed, led by the skill's
 * own line when the traceback had one (docs/skill-lifecycle.md#success).
 */
const MODULE_NOT_FOUND = /^(?:line \d+: )?ModuleNotFoundError: No module named '([^']+)'$/;

/**
 * The module a failed run could not import, when that is what failed it
 * (docs/packages.md#missing-modules): its one-line cause (the last traceback's exception line) is
 * `ModuleNotFoundError: No module named '<module>'`, after `line N: `. A run that timed out or ran out of memory has
 * another cause; one whose traceback ends in another exception (a skill that caught the import
 * error and raised its own) keeps it.
 */
export function missingModuleOf(run: {
  readonly errorSummary: string;
  readonly timedOut: boolean;
  readonly oomKilled: boolean;
}): string | undefined {
  if (run.timedOut || run.oomKilled) return undefined;
  return MODULE_NOT_FOUND.exec(run.errorSummary.trim())?.[1];
}

/**
 * What a test run that failed on a missing module answers (docs/packages.md#missing-modules): the
 * module and the field to declare it in, with the package that provides it. `isSkill`: the
 * module's top-level name is a skill the caller can see, so `depends_on` is the field.
 */
export function missingModuleCause(module: string, declared: DeclaredPackageNames, isSkill = false): string {
  if (isSkill) {
    const top = module.split(".")[0] ?? module;
    return (
      `the test run failed: module "${module}" is not installed in the sandbox; "${top}" is a skill: ` +
      "declare it in depends_on to have its code placed beside this one (docs/composition.md#dependencies)"
    );
  }
  const provider = providerOf(module);
  const already = declaredProvider(provider, declared);
  if (already !== undefined) {
    const provides = provider.module === module ? "" : `, which provides "${provider.module}",`;
    return (
      `the test run failed: module "${module}" could not be imported although ${already}${provides} is declared; ` +
      "check the module's name against the package's version (docs/packages.md)"
    );
  }
  const debian = provider.debian === undefined ? "" : ` or system_packages (${provider.debian})`;
  const sandbox =
    declared.requirements.length === 0 && declared.systemPackages.length === 0
      ? "the sandbox has Python's standard library only"
      : "the sandbox has Python's standard library and the declared packages only";
  return (
    `the test run failed: module "${module}" is not installed in the sandbox; ` +
    `declare it in requirements (${provider.pip[0]})${debian} — ${sandbox} (docs/packages.md)`
  );
}
