import type { Migration } from "./migration.js";

/**
 * Packages for skills (docs/packages.md): what each version declares, and the environments built
 * for them. A version's requirements and Debian packages are part of it, like its code; the
 * environment a set builds into is shared by every version that declares the same set, and its
 * lock (the exact files installed) is what a rebuild installs again.
 */
export const ENVIRONMENT_MIGRATIONS: readonly Migration[] = [
  {
    concern: "environments",
    summary: "each version's declared packages, and the environments built for them",
    sql: `ALTER TABLE skill_versions ADD COLUMN requirements TEXT NOT NULL DEFAULT '[]';
          ALTER TABLE skill_versions ADD COLUMN system_packages TEXT NOT NULL DEFAULT '[]';
          ALTER TABLE skill_versions ADD COLUMN environment_id TEXT NOT NULL DEFAULT '';
          CREATE INDEX skill_versions_by_environment ON skill_versions (environment_id) WHERE environment_id != '';
          CREATE TABLE skill_environments (
            id TEXT PRIMARY KEY,
            requirements TEXT NOT NULL,
            system_packages TEXT NOT NULL,
            lock TEXT NOT NULL DEFAULT '',
            size_bytes INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL CHECK (status IN ('ready', 'failed', 'missing')),
            error TEXT NOT NULL DEFAULT '',
            built_at INTEGER NOT NULL,
            last_used_at INTEGER NOT NULL
          ) STRICT;`,
  },
];
