import type { Migration } from "./migration.js";

/**
 * The skill registry's tables: skills, their version history, invocations, grants and reported
 * outcomes (docs/architecture.md#storage). These four were the registry's own list before every
 * table of registry.db joined one list; their SQL is unchanged, so files of any earlier version
 * upgrade as they always did.
 */
export const REGISTRY_MIGRATIONS: readonly Migration[] = [
  {
    concern: "registry",
    summary: "skills, their versions and invocations",
    sql: `CREATE TABLE skills (
     name TEXT PRIMARY KEY,
     description TEXT NOT NULL,
     parameters_schema TEXT NOT NULL,
     test_payload TEXT NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('active', 'degraded', 'deprecated', 'retired', 'deleted')),
     status_reason TEXT NOT NULL DEFAULT '',
     health_warning TEXT NOT NULL DEFAULT '',
     version INTEGER NOT NULL CHECK (version >= 1),
     content_hash TEXT NOT NULL,
     usage_count INTEGER NOT NULL DEFAULT 0,
     failure_count INTEGER NOT NULL DEFAULT 0,
     protected INTEGER NOT NULL DEFAULT 0,
     auto_created INTEGER NOT NULL DEFAULT 0,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL,
     status_changed_at INTEGER NOT NULL,
     last_invoked_at INTEGER
   ) STRICT;
   CREATE TABLE skill_versions (
     name TEXT NOT NULL,
     version INTEGER NOT NULL CHECK (version >= 1),
     description TEXT NOT NULL,
     parameters_schema TEXT NOT NULL,
     test_payload TEXT NOT NULL,
     content_hash TEXT NOT NULL,
     origin TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     PRIMARY KEY (name, version)
   ) STRICT;
   CREATE TABLE invocations (
     id INTEGER PRIMARY KEY,
     skill_name TEXT NOT NULL,
     version INTEGER NOT NULL,
     invoked_at INTEGER NOT NULL,
     success INTEGER NOT NULL,
     duration_ms INTEGER NOT NULL,
     exit_code INTEGER NOT NULL,
     timed_out INTEGER NOT NULL,
     oom_killed INTEGER NOT NULL,
     error_summary TEXT NOT NULL,
     caller TEXT NOT NULL
   ) STRICT;
   CREATE INDEX invocations_by_skill ON invocations (skill_name, version, id);
   CREATE INDEX invocations_by_time ON invocations (skill_name, invoked_at);`,
  },
  // Identity and scoping: skills from before it belong to the local agent and stay private.
  {
    concern: "registry",
    summary: "owners and visibility",
    sql: `ALTER TABLE skills ADD COLUMN owner TEXT NOT NULL DEFAULT 'local';
   ALTER TABLE skills ADD COLUMN visibility TEXT NOT NULL DEFAULT 'private' CHECK (visibility IN ('private', 'public'));
   CREATE INDEX skills_by_owner ON skills (owner, name);
   CREATE INDEX skills_by_visibility ON skills (visibility, name);`,
  },
  // Grants, system skills and the on/off switch (docs/security.md#grants-and-visibility). The
  // stored visibility stays private or public; internal is derived (private with a grant).
  {
    concern: "registry",
    summary: "grants, system skills and the on/off switch",
    sql: `ALTER TABLE skills ADD COLUMN is_system INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE skills ADD COLUMN enabled INTEGER NOT NULL DEFAULT 1;
   ALTER TABLE skills ADD COLUMN disabled_by TEXT NOT NULL DEFAULT '';
   CREATE TABLE skill_grants (
     name TEXT NOT NULL,
     grantee_kind TEXT NOT NULL CHECK (grantee_kind IN ('agent', 'user')),
     grantee TEXT NOT NULL,
     version INTEGER CHECK (version IS NULL OR version >= 1),
     granted_by TEXT NOT NULL,
     granted_at INTEGER NOT NULL,
     PRIMARY KEY (name, grantee_kind, grantee)
   ) STRICT;
   CREATE INDEX skill_grants_by_grantee ON skill_grants (grantee_kind, grantee, name);`,
  },
  // Whose reports count (docs/learning.md#whose-reports-count). invocation_outcomes joins this list
  // (registries from before it created the table on open, hence IF NOT EXISTS), and each report
  // keeps whether its reporter was the skill's owner or an admin. An earlier report is trusted when
  // its reporter owns the skill now: whether it came from an admin was not kept.
  {
    concern: "registry",
    summary: "reported outcomes and whose reports count",
    sql: `CREATE TABLE IF NOT EXISTS invocation_outcomes (
     id INTEGER PRIMARY KEY,
     skill_name TEXT NOT NULL,
     version INTEGER NOT NULL,
     invocation_id INTEGER,
     source TEXT NOT NULL CHECK (source IN ('explicit', 'implicit')),
     success INTEGER NOT NULL,
     weight REAL NOT NULL,
     note TEXT NOT NULL DEFAULT '',
     caller TEXT NOT NULL,
     at INTEGER NOT NULL
   ) STRICT;
   CREATE UNIQUE INDEX IF NOT EXISTS invocation_outcomes_explicit ON invocation_outcomes (invocation_id) WHERE source = 'explicit';
   DROP INDEX IF EXISTS invocation_outcomes_standalone;
   ALTER TABLE invocation_outcomes ADD COLUMN trusted INTEGER NOT NULL DEFAULT 0 CHECK (trusted IN (0, 1));
   UPDATE invocation_outcomes SET trusted = 1 WHERE caller = (SELECT s.owner FROM skills s WHERE s.name = invocation_outcomes.skill_name);
   -- The window reads the newest reports of no invocation by kind (trusted; untrusted by verdict).
   CREATE INDEX invocation_outcomes_by_trust ON invocation_outcomes (skill_name, version, trusted, success, at) WHERE invocation_id IS NULL;
   CREATE INDEX invocation_outcomes_by_caller ON invocation_outcomes (caller, skill_name, version);`,
  },
];
