import type { Logger } from "pino";
import type { HostPattern } from "../../egress/index.js";
import type { SandboxEnvironment, SandboxFolderFile, SandboxRunner } from "../../execution/index.js";
import type { Composition } from "../composition/index.js";
import type { DuplicateScreen } from "../duplicate-screen.js";
import type { RoutingGate } from "../routing-gate.js";
import type { CodeIntake, InputFileLimits } from "../intake/index.js";
import type { HealthPolicy, SkillRecord, SkillRegistry, VersionPackages } from "../registry/index.js";
import type { SkillIndexer } from "../skill-indexer.js";
import type { CanonicalStore, MirrorWriter } from "../store/index.js";
import type { EnvironmentAdministration } from "./environment-operations.js";

/** What the control plane's use cases are built from: its stores and the ports it talks through. */
export interface ControlDependencies {
  readonly registry: SkillRegistry;
  readonly store: CanonicalStore;
  /** The execution plane's port: every test run and invocation goes through it. */
  readonly runner: SandboxRunner;
  readonly mirror: MirrorWriter;
  readonly intake: CodeIntake;
  readonly policy: HealthPolicy;
  readonly logger: Logger;
  /** Composed skills and dependencies (docs/composition.md). */
  readonly composition: Composition;
  /** Keeps routing's indexes in step; omitted where routing is not wired (some tests). */
  readonly indexer?: SkillIndexer;
  /** Near-duplicates at the door (docs/learning.md#near-duplicates); omitted: none are looked for. */
  readonly duplicates?: DuplicateScreen;
  /** How a new skill ranks for its example queries (docs/routing.md#the-routing-gate); omitted: RegisterSkill reports none. */
  readonly routingGate?: RoutingGate;
  /** @default () => new Date() */
  readonly now?: () => Date;
  /** Folder skills (docs/skill-sources.md); omitted where no skill sources are wired. */
  readonly folders?: FolderSkillRuns;
  /** Environments of packages (docs/packages.md); omitted: a skill that declares packages is refused. */
  readonly environments?: SkillEnvironments;
  /** The operator's side of the environments (docs/packages.md#operators); omitted: none are listed. */
  readonly environmentAdmin?: EnvironmentAdministration;
  /** What a call may hand a run as files (docs/files.md#input-files). @default 64 files, 16 MiB together */
  readonly inputFiles?: InputFileLimits;
  /** The agents' secrets (docs/security.md#declaring-and-delivering); omitted: no agent has any, so a version that declares one cannot run. */
  readonly secrets?: SkillSecrets;
  /**
   * The operator's egress policy (SKILL_ENGINE_EGRESS_ALLOWED_HOSTS, docs/security.md#declaring-hosts): the
   * hosts any skill may declare, checked at registration and again before every run.
   * @default [] no skill may declare a host
   */
  readonly egressPolicy?: readonly HostPattern[];
}

/**
 * Port: the values of an agent's secrets, read before each run that declares some
 * (docs/security.md#declaring-and-delivering), implemented by src/secrets' store.
 */
export interface SkillSecrets {
  /** The agent's values of `names` that exist (a name it has not set is absent from the map). Never logs a value. */
  valuesFor(agentId: string, names: readonly string[]): Promise<ReadonlyMap<string, string>>;
}

/** What a version declares beyond the standard library, as the caller sent it. */
export interface DeclaredPackages {
  readonly requirements: readonly string[];
  readonly systemPackages: readonly string[];
}

/**
 * Port: environments of packages (docs/packages.md), implemented by src/environments. Building
 * waits for the installer; a declaration that cannot be built is refused before any test run.
 */
export interface SkillEnvironments {
  /**
   * Validates and normalises a declaration and builds (or reuses) its environment; undefined when
   * it declares nothing. Invalid: InvalidArgumentError; cannot be built: FailedPreconditionError.
   */
  prepare(
    declared: DeclaredPackages,
  ): Promise<{ readonly packages: VersionPackages; readonly environment: SandboxEnvironment } | undefined>;
  /** A committed version's environment, rebuilt from its lock when its directory was lost. */
  environmentOf(packages: VersionPackages): Promise<SandboxEnvironment>;
}

/** How a folder skill's version runs: its launcher with the folder beside it, or nothing (instructions only). */
export type FolderRun =
  { readonly kind: "executable"; readonly launcher: string; readonly folder: SandboxFolderFile[] } | { readonly kind: "instructions" };

/** A folder skill's kind and id, as GetSkill, routing's headers and the console show them. */
export interface FolderHeader {
  readonly kind: "directory" | "instructions";
  readonly skillId: string;
}

/**
 * Port: what the use cases read of folder skills (docs/skill-sources.md#running), implemented by
 * the skill sources over their own tables and canonical folders.
 */
export interface FolderSkillRuns {
  /** How `name` v`version` runs; undefined for a skill that is not kept as a folder. */
  runOf(name: string, version: number): Promise<FolderRun | undefined>;
  /** True when `name` is kept as a folder (its versions come from its folder, not from RegisterSkill). */
  isFolderSkill(name: string): boolean;
  /** A folder skill's kind and id, for its active version; undefined for other skills. */
  header(record: SkillRecord): FolderHeader | undefined;
}
