import { ConflictError, FailedPreconditionError, InvalidArgumentError, SkillVersionNotFoundError } from "../../errors/index.js";
import type { CallContext } from "../call-context.js";
import { localModulesOf, missingDependencyWarnings, validateSkillName } from "../intake/index.js";
import { isLive, type SkillRecord } from "../registry/index.js";
import { fromStoreError } from "../store/index.js";
import type { DependentRetests } from "./dependent-retests.js";
import type { RegistrationResult } from "./register-skill.js";
import type { SkillCore } from "./skill-core.js";
import { liveSkill } from "./skill-lookup.js";
import type { VersionGate } from "./version-gate.js";

/** PatchSkill's input: one exact, unique replacement in the active code. */
export interface PatchInput {
  readonly name: string;
  readonly find: string;
  readonly replace: string;
  /** Empty reuses the active version's test payload. */
  readonly testPayload: string;
}

/**
 * PatchSkill and RollbackSkill (docs/skill-lifecycle.md#patching, #rollback): a new version from a
 * find-and-replace through the same gate as a registration, or an earlier version made active again.
 */
export class Patching {
  constructor(
    private readonly core: SkillCore,
    private readonly gate: VersionGate,
    private readonly retests: DependentRetests,
  ) {}

  async patch(input: PatchInput, context: CallContext): Promise<RegistrationResult> {
    const { core } = this;
    const skill = liveSkill(core.lookup.manageable(input.name, context.caller, "patch"), "patch");
    core.refuseFolderSkill(skill.name, "patch");
    const declared = core.composition.declaredOf(skill);
    if (declared.kind === "composed") {
      throw new FailedPreconditionError(`"${skill.name}" is a composed skill: replace its definition with RegisterComposedSkill`);
    }
    if (input.find === "") throw new InvalidArgumentError("find", "is required: the exact text to replace");
    const current = await core.activeCode(skill);
    const occurrences = current.split(input.find).length - 1;
    if (occurrences === 0) {
      throw new InvalidArgumentError("find", `does not occur in the active code of "${skill.name}" (v${skill.version})`);
    }
    if (occurrences > 1) {
      throw new InvalidArgumentError("find", `occurs ${occurrences} times in the active code; include more context so it is unique`);
    }
    const at = current.indexOf(input.find);
    const patched = current.slice(0, at) + input.replace + current.slice(at + input.find.length);
    const validate = core.payloadValidatorFor(skill);
    const testPayload = validate("test_payload", input.testPayload.trim() === "" ? skill.testPayload : input.testPayload);
    // A patch keeps the version's secrets (docs/security.md#declaring-and-delivering): its test run gets the caller's values.
    const secrets = skill.secrets;
    await core.secretValues(skill.name, secrets, context);
    // And its declared hosts (docs/security.md#declaring-hosts): checked against the policy as it is now.
    const networkAllow = skill.networkAllow;
    core.checkEgressPolicy(skill.name, networkAllow, context);
    const prepared = await core.intake.prepare(patched, { declaredSecrets: secrets, declaresNetwork: networkAllow.length > 0 });
    const files = await core.composition.dependencyFiles(skill.name, declared.dependsOn);
    // A patch keeps the version's packages (docs/packages.md#declaring): its test runs in their environment.
    const packages = core.packagesOf(skill, skill.version);
    const environment = await core.environmentOf(packages, skill.name);
    const declaredPackages = { requirements: skill.requirements, systemPackages: skill.systemPackages };
    // A patch keeps the version's test files too (docs/files.md#test-files): its test run is handed them.
    const testFiles = await core.testFiles(skill.name, skill.version);
    const test = await this.gate.test(
      {
        skillName: skill.name,
        code: prepared.code,
        payload: testPayload,
        files,
        environment,
        inputFiles: testFiles,
        secrets,
        networkAllow,
      },
      context,
      declaredPackages,
    );
    const committed = await core.locked(skill.name, async () => {
      const latest = core.registry.get(skill.name);
      if (!latest || latest.version !== skill.version || !isLive(latest.status)) {
        throw new ConflictError(
          `"${skill.name}" changed while the patch was being tested (v${skill.version} → v${latest?.version ?? "?"}); read it again and retry`,
        );
      }
      return this.gate.commit({
        name: skill.name,
        code: prepared.code,
        description: skill.description,
        parametersSchema: skill.parametersSchema,
        testPayload,
        origin: "patch",
        access: latest,
        declared,
        packages,
        testFiles,
        secrets,
        networkAllow,
      });
    });
    await core.reindex(committed);
    const { dependentsRetested, hiddenDependentsRetested } = await this.retests.after(committed, context);
    core.logger.info(
      { skill: committed.name, version: committed.version, agent: context.caller.agentId, requestId: context.requestId },
      "skill patched",
    );
    return {
      skill: committed,
      test,
      normalizations: prepared.normalizations,
      // The dependency scan (warn only) against the packages the patch keeps (docs/packages.md#the-dependency-scan).
      warnings: [
        ...prepared.warnings,
        ...missingDependencyWarnings({
          imports: prepared.imports,
          ...declaredPackages,
          localModules: localModulesOf(files.map((f) => f.name)),
        }),
      ],
      dependentsRetested,
      hiddenDependentsRetested,
    };
  }

  async rollback(input: { readonly name: string; readonly version: number }, context: CallContext): Promise<SkillRecord> {
    const { core } = this;
    const { name, version } = input;
    validateSkillName(name);
    if (!Number.isInteger(version) || version < 1) throw new InvalidArgumentError("version", "must be a version number ≥ 1");
    return core.locked(name, async () => {
      const skill = liveSkill(core.lookup.manageable(name, context.caller, "roll back"), "roll back");
      if (skill.version === version) throw new FailedPreconditionError(`"${name}" is already at version ${version}`);
      const target = core.registry.version(name, version);
      if (!target) throw new SkillVersionNotFoundError(name, version, skill.latestVersion);
      const code = await core.historyCode(name, version, target.contentHash);
      // Everything that can run out of space is written before the registry commits; a failure
      // at any step leaves the skill as it was (docs/operations.md#full-disks-and-a-locked-registry).
      const active = await core.store.prepareActive(name, code).catch((error: unknown) => {
        throw fromStoreError(error, `roll "${name}" back to v${version}`);
      });
      let rolledBack: SkillRecord;
      try {
        rolledBack = core.registry.activateVersion(name, version, core.now());
      } catch (error) {
        await active.discard();
        throw error;
      }
      await this.gate.place(active, name);
      await core.afterChange(rolledBack);
      core.logger.info(
        { skill: name, from: skill.version, to: version, agent: context.caller.agentId, requestId: context.requestId },
        "skill rolled back",
      );
      return rolledBack;
    });
  }
}
