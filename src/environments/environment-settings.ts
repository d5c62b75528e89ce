/**
 * How environments are built (docs/packages.md): the settings src/config reads from the
 * environment, with the defaults documented there and on SkillEngineConfig.
 */
export interface EnvironmentSettings {
  /** The operator's package index (PEP 503 "simple" URL), passed to pip as `--index-url`. @default none (SKILL_ENGINE_PIP_INDEX_URL) */
  readonly pipIndexUrl: string | undefined;
  /** A folder of wheels, installed from offline (`--no-index --find-links`). @default none (SKILL_ENGINE_WHEELHOUSE) */
  readonly wheelhouse: string | undefined;
  /** The host's Python whose pip installs the wheels; its version should be the sandbox's. @default "/usr/bin/python3" (SKILL_ENGINE_PIP_PYTHON) */
  readonly pipPython: string;
  /**
   * A sources.list for Debian packages, read with `apt-get update` into a private list directory on
   * each build; undefined: the host's own apt sources and lists. @default none (SKILL_ENGINE_APT_SOURCES)
   */
  readonly aptSourceList: string | undefined;
  /** One build's time limit, installers included; past it their process group is killed. @default 300 s (SKILL_ENGINE_ENV_BUILD_TIMEOUT_SECONDS) */
  readonly buildTimeoutMs: number;
  /** An environment's size limit, measured once installed. @default 512 MiB (SKILL_ENGINE_ENV_MAX_BYTES) */
  readonly maxBytes: number;
  /** How long an environment no version refers to is kept before it is removed. @default 24 h (SKILL_ENGINE_ENV_UNUSED_GRACE_HOURS) */
  readonly unusedGraceMs: number;
}

export const DEFAULT_ENVIRONMENT_SETTINGS: EnvironmentSettings = {
  pipIndexUrl: undefined,
  wheelhouse: undefined,
  pipPython: "/usr/bin/python3",
  aptSourceList: undefined,
  buildTimeoutMs: 300_000,
  maxBytes: 512 * 1024 * 1024,
  unusedGraceMs: 24 * 3600 * 1000,
};

/** Where a container sees its environment (read-only), and so where compiled bytecode says its sources are. */
export const ENVIRONMENT_MOUNT = "/opt/skill-env";
