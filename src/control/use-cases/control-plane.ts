import type { SkillRecord } from "../registry/index.js";
import { AccessChanges } from "./access-changes.js";
import { ConsoleReads } from "./console-reads.js";
import type { ControlDependencies } from "./control-dependencies.js";
import { DependentRetests } from "./dependent-retests.js";
import { EnvironmentOperations } from "./environment-operations.js";
import { FolderSkills } from "./folder-skills.js";
import { Invocation } from "./invocation.js";
import { Lifecycle } from "./lifecycle.js";
import { Operations } from "./operations.js";
import { Patching } from "./patching.js";
import { RegisterComposedSkill } from "./register-composed-skill.js";
import { RegisterSkill } from "./register-skill.js";
import { RetirementSweep } from "./retirement-sweep.js";
import { SkillCore } from "./skill-core.js";
import { SkillQueries } from "./skill-queries.js";
import { SkillRuns } from "./skill-runs.js";
import { VersionGate } from "./version-gate.js";

/**
 * The control plane's use cases over one shared core (temporalio's sub-clients over a base
 * client): each caller takes the one it needs. Every use case is `(input, context)`.
 */
export interface ControlPlane {
  /** RegisterSkill. */
  readonly registration: RegisterSkill;
  /** RegisterComposedSkill. */
  readonly composedRegistration: RegisterComposedSkill;
  /** PatchSkill, RollbackSkill. */
  readonly patching: Patching;
  /** InvokeSkill. */
  readonly invocation: Invocation;
  /** RetireSkill, DeleteSkill, RestoreSkill, SetSkillProtected. */
  readonly lifecycle: Lifecycle;
  /** RetireDegradedSkills and the periodic sweep. */
  readonly retirementSweep: RetirementSweep;
  /** GetSkill, ListSkills, ListSkillVersions, GetSkillStats, GetSkillDependencies, GetCatalog. */
  readonly queries: SkillQueries;
  /** The operator console's reads beyond the RPCs'. */
  readonly consoleReads: ConsoleReads;
  /** SetSkillVisibility, TransferSkill, grants and the on/off switch. */
  readonly access: AccessChanges;
  /** WipeSandbox, RebuildIndexes. */
  readonly operations: Operations;
  /** ListEnvironments, RebuildEnvironments, CheckRuntimes. */
  readonly environments: EnvironmentOperations;
  /** What the skill folders register, retire and restore (their port). */
  readonly folderSkills: FolderSkills;
  /** After an outcome recorded elsewhere changed a skill's record: the mirror and routing follow a status change. */
  followStatusChange(before: SkillRecord, after: SkillRecord): Promise<void>;
}

/** Builds every use case over one core; the composition root calls it once. */
export function createControlPlane(deps: ControlDependencies): ControlPlane {
  const core = new SkillCore(deps);
  const gate = new VersionGate(core);
  const runs = new SkillRuns(core);
  const retests = new DependentRetests(core, runs);
  const lifecycle = new Lifecycle(core);
  return {
    registration: new RegisterSkill(core, gate, retests),
    composedRegistration: new RegisterComposedSkill(core, gate, runs),
    patching: new Patching(core, gate, retests),
    invocation: new Invocation(core, runs),
    lifecycle,
    retirementSweep: new RetirementSweep(core),
    queries: new SkillQueries(core),
    consoleReads: new ConsoleReads(core),
    access: new AccessChanges(core),
    operations: new Operations(core),
    environments: new EnvironmentOperations(core, deps.environmentAdmin),
    folderSkills: new FolderSkills(core, gate, lifecycle),
    followStatusChange: (before, after) => core.followStatusChange(before, after),
  };
}
