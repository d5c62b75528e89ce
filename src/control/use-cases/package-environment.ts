import { FailedPreconditionError } from "../../errors/index.js";
import type { SandboxEnvironment } from "../../execution/index.js";
import type { VersionPackages } from "../registry/index.js";
import type { DeclaredPackages } from "./control-dependencies.js";
import type { SkillCore } from "./skill-core.js";

/**
 * The environment of a new version's declared packages (docs/packages.md#environments), or none
 * when it declares nothing: RegisterSkill's and a folder skill's. A service without a package
 * source refuses a declaration outright.
 */
export async function prepareEnvironment(
  core: SkillCore,
  declared: DeclaredPackages,
): Promise<{ readonly packages: VersionPackages; readonly environment: SandboxEnvironment } | undefined> {
  if (declared.requirements.length === 0 && declared.systemPackages.length === 0) return undefined;
  if (!core.environments) {
    throw new FailedPreconditionError(
      "this service installs no packages: it has no package source configured; set SKILL_ENGINE_WHEELHOUSE or " +
        "SKILL_ENGINE_PIP_INDEX_URL, or register the skill without requirements (docs/packages.md)",
    );
  }
  return core.environments.prepare(declared);
}
