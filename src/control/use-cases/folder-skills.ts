import { AlreadyExistsError } from "../../errors/index.js";
import type { ExecutionResult, SandboxFolderFile } from "../../execution/index.js";
import type { Caller } from "../../identity/index.js";
import type { CallContext } from "../call-context.js";
import type { OnDuplicate, SimilarSkillReport } from "../duplicate-screen.js";
import {
  type DeclaredPackageNames,
  type IntakeWarning,
  localModulesOf,
  missingDependencyWarnings,
  validateInputFiles,
  validateRegistration,
} from "../intake/index.js";
import { validateNetworkAllow, validateSecretNames } from "../access/index.js";
import { isLive, type SkillAccess, type SkillRecord } from "../registry/index.js";
import type { Lifecycle } from "./lifecycle.js";
import { prepareEnvironment } from "./package-environment.js";
import { screenDuplicates } from "./registration-rules.js";
import type { SkillCore } from "./skill-core.js";
import { testFailure, type VersionGate } from "./version-gate.js";

/** A version of a folder skill to register (docs/skill-sources.md#registration). */
export interface FolderSkillInput {
  readonly name: string;
  readonly description: string;
  readonly parametersSchema: string;
  /** The entrypoint's source (executable), or the SKILL.md text (instructions). */
  readonly code: string;
  readonly testPayload: string;
  /** Set for an executable folder: the launcher and the folder's files the TDD gate runs. */
  readonly run?: { readonly launcher: string; readonly folder: readonly SandboxFolderFile[] };
  readonly access: SkillAccess;
  /** Writes what belongs to the version (its canonical folder, its source row) before the registry commits it. */
  readonly beforeCommit: (version: number) => Promise<void>;
  /** Undoes `beforeCommit` when the commit fails. */
  readonly discard: (version: number) => Promise<void>;
  /**
   * What a near-duplicate does: a discovered folder cannot be refused back to its author, so it
   * only warns (the default); an imported bundle takes its caller's choice.
   * @default "warn"
   */
  readonly onDuplicate?: OnDuplicate;
  /** PEP 508 requirement specifiers the folder declares (docs/packages.md). @default [] */
  readonly requirements?: readonly string[];
  /** Debian packages the folder declares (docs/packages.md). @default [] */
  readonly systemPackages?: readonly string[];
  /** The folder's `tests/files/`, handed to its test runs under /sandbox/in/ (docs/files.md#test-files). @default [] */
  readonly testFiles?: readonly { readonly path: string; readonly content: Uint8Array }[];
  /** The secret names its SKILL.md declares (`metadata.secrets`, docs/skill-sources.md#secrets), checked. @default [] */
  readonly secrets?: readonly string[];
  /** The hosts its SKILL.md declares (`metadata.network_allow`, docs/skill-sources.md#hosts), within the operator's policy. @default [] */
  readonly networkAllow?: readonly string[];
  /** The skills its SKILL.md declares in `depends_on`, under RegisterSkill's rules (docs/skill-sources.md#dependencies). @default [] */
  readonly dependsOn?: readonly string[];
}

/** A folder's version as registered: the record, its test run (executable folders) and what it resembles. */
export interface FolderRegistration {
  readonly skill: SkillRecord;
  readonly test: ExecutionResult | undefined;
  readonly similarSkills: SimilarSkillReport[];
  /** The dependency scan's findings over the folder's Python files (docs/packages.md#the-dependency-scan); logged too. */
  readonly warnings: IntakeWarning[];
}

/** At most this many of a folder's Python files are scanned for imports (docs/packages.md#the-dependency-scan). */
export const MAX_SCANNED_FOLDER_FILES = 32;

/**
 * What the skill folders ask of the control plane (docs/skill-sources.md#registration): register
 * what they find, retire what is gone, restore what came back. Handed to the skill sources at
 * construction as the port they define.
 */
export class FolderSkills {
  constructor(
    private readonly core: SkillCore,
    private readonly gate: VersionGate,
    private readonly lifecycle: Lifecycle,
  ) {}

  /**
   * An executable folder passes the same TDD gate as every skill (its launcher run with the folder
   * beside it); an instructions-only folder has nothing to run. Committed like any version; owner
   * and visibility are `access`.
   */
  async register(input: FolderSkillInput, context: CallContext): Promise<FolderRegistration> {
    const { core } = this;
    const valid = validateRegistration(input);
    const existing = core.registry.get(valid.name);
    if (existing && !core.folders?.isFolderSkill(valid.name)) {
      throw new AlreadyExistsError(`the name "${valid.name}" is taken by a skill that is not kept as a folder`);
    }
    const testPayload = valid.validatePayload("test_payload", valid.testPayload);
    // Dependencies must be live plain skills its owner may see, and close no cycle, as for RegisterSkill.
    const owner: Caller = { agentId: input.access.owner, admin: false, authenticated: false };
    const dependsOn = core.composition.preflightPlain(valid.name, input.dependsOn ?? [], owner);
    const testFiles = validateInputFiles("tests/files", input.testFiles ?? [], core.inputFileLimits);
    const secrets = validateSecretNames("SKILL.md metadata.secrets", input.secrets ?? []);
    const networkAllow = validateNetworkAllow("SKILL.md metadata.network_allow", input.networkAllow ?? [], core.egressPolicy);
    // Folders and bundles are screened too: a folder only warns (the log and the near-duplicate
    // metric say so), an import may be refused before its test runs.
    const similarSkills = await screenDuplicates(
      core,
      { skill: { name: valid.name, description: valid.description, code: valid.code }, onDuplicate: input.onDuplicate ?? "warn" },
      context,
    );
    const near = similarSkills.filter((s) => s.nearDuplicate).map((s) => s.name);
    if (near.length > 0) core.logger.warn({ skill: valid.name, nearDuplicates: near }, "folder skill is a near-duplicate");
    const declaredPackages = { requirements: input.requirements ?? [], systemPackages: input.systemPackages ?? [] };
    // The test run's secrets are checked before anything is built (docs/skill-sources.md#secrets).
    await core.secretValues(valid.name, secrets, context);
    // The environment of its packages, as RegisterSkill builds it (docs/skill-sources.md#packages): a
    // declaration that cannot be built refuses this version, and the folder's version before stays active.
    const built = await prepareEnvironment(core, declaredPackages);
    let test: ExecutionResult | undefined;
    let warnings: IntakeWarning[] = [];
    if (input.run) {
      test = await core.runSandbox(
        {
          purpose: "test",
          skillName: valid.name,
          code: input.run.launcher,
          payload: testPayload,
          folder: input.run.folder,
          files: await core.composition.dependencyFiles(valid.name, dependsOn),
          environment: built?.environment,
          inputFiles: testFiles,
          // The test run uses the secrets of the agent the folder is registered for.
          secrets,
          networkAllow,
        },
        context,
      );
      if (!test.success) {
        core.logger.info({ skill: valid.name, cause: test.errorSummary }, "skill folder rejected by its test run");
        throw testFailure(valid.name, test, declaredPackages, (module) => this.gate.skillSeen(module, context));
      }
      warnings = await this.scanFolder(valid.name, input.run.folder, declaredPackages);
    }
    const skill = await core.locked(valid.name, () =>
      this.gate.commit({
        name: valid.name,
        code: valid.code,
        description: valid.description,
        parametersSchema: valid.parametersSchema,
        testPayload,
        origin: "register",
        access: input.access,
        extras: { before: input.beforeCommit, discard: input.discard },
        packages: built?.packages,
        testFiles,
        secrets,
        networkAllow,
        declared: { kind: "plain", dependsOn },
      }),
    );
    await core.reindex(skill);
    core.logger.info({ skill: skill.name, version: skill.version, requestId: context.requestId }, "folder skill registered");
    return { skill, test, similarSkills, warnings };
  }

  /**
   * The dependency scan over an executable folder's Python files, each finding quoting its file
   * (docs/packages.md#the-dependency-scan). Warn only: a parser that cannot run skips it.
   */
  private async scanFolder(name: string, folder: readonly SandboxFolderFile[], declared: DeclaredPackageNames): Promise<IntakeWarning[]> {
    const { core } = this;
    const python = folder
      .filter((file) => file.path.endsWith(".py"))
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
      .slice(0, MAX_SCANNED_FOLDER_FILES);
    const localModules = localModulesOf(folder.map((file) => file.path));
    const warnings: IntakeWarning[] = [];
    try {
      for (const file of python) {
        const imports = await core.intake.listImports(file.content.toString("utf8"));
        warnings.push(...missingDependencyWarnings({ imports, ...declared, localModules, file: file.path }));
      }
    } catch (error) {
      core.logger.error({ err: error, skill: name }, "could not scan the folder's imports; registered without the scan");
      return [];
    }
    if (warnings.length > 0) {
      core.logger.warn({ skill: name, warnings: warnings.map((w) => w.message) }, "folder skill imports undeclared packages");
    }
    return warnings;
  }

  /** Retires a folder skill whose folder is gone (docs/skill-sources.md#hot-reload); a no-op unless it is live. */
  async retire(input: { readonly name: string; readonly reason: string }, context: CallContext): Promise<SkillRecord | undefined> {
    const { core } = this;
    const { name, reason } = input;
    return core.locked(name, async () => {
      const current = core.registry.get(name);
      if (!current || !isLive(current.status)) return undefined;
      const retired = await core.takeOut(current, "retired", reason);
      core.logger.warn({ skill: name, reason, agent: context.caller.agentId }, "folder skill retired");
      return retired;
    });
  }

  /** Brings back a folder skill whose folder is back: RestoreSkill's use case, as the scan's caller. */
  restore(input: { readonly name: string }, context: CallContext): Promise<SkillRecord> {
    return this.lifecycle.restore(input, context);
  }
}
