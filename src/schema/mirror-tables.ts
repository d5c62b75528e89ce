import type { Migration } from "./migration.js";

/** The tables whose rows make up a skill's mirror entry (src/control/store/mirror-format.ts `toMirrorEntry`). */
const MIRRORED_TABLES = ["skills", "skill_versions", "skill_grants", "skill_version_test_files"] as const;

/**
 * A change marker: a fresh number for every change. `random() >> 11` keeps it within 53 bits, so it
 * reaches JavaScript as an exact number and the writer can settle exactly the change it wrote.
 */
const MARK = "random() >> 11";

/**
 * The columns of `skills` an entry shows: an update that changes none of them (the health warning,
 * the streak's start) leaves the mirror as it is.
 */
const MIRRORED_SKILL_COLUMNS = [
  "name",
  "description",
  "parameters_schema",
  "test_payload",
  "status",
  "status_reason",
  "version",
  "content_hash",
  "usage_count",
  "failure_count",
  "protected",
  "auto_created",
  "created_at",
  "updated_at",
  "last_invoked_at",
  "owner",
  "visibility",
  "is_system",
  "enabled",
  "disabled_by",
];

function triggersOf(table: string): string {
  const mark = (row: "NEW" | "OLD"): string =>
    `INSERT INTO mirror_pending (name, change) VALUES (${row}.name, ${MARK})
       ON CONFLICT (name) DO UPDATE SET change = excluded.change;`;
  const onUpdate = table === "skills" ? ` WHEN ${MIRRORED_SKILL_COLUMNS.map((c) => `NEW.${c} IS NOT OLD.${c}`).join(" OR ")}` : "";
  return `CREATE TRIGGER IF NOT EXISTS ${table}_mirror_insert AFTER INSERT ON ${table} BEGIN ${mark("NEW")} END;
          CREATE TRIGGER IF NOT EXISTS ${table}_mirror_update AFTER UPDATE ON ${table}${onUpdate} BEGIN ${mark("NEW")} ${mark("OLD")} END;
          CREATE TRIGGER IF NOT EXISTS ${table}_mirror_delete AFTER DELETE ON ${table} BEGIN ${mark("OLD")} END;`;
}

/**
 * The registry mirror's outbox (docs/operations.md#the-registry-mirror): every skill whose mirror
 * entry no longer matches the registry, marked by triggers in the same transaction as the change,
 * whoever makes it. The mirror's writer rewrites those skills' files and removes each mark only if it
 * is still the one it wrote, so a change made during the write is written again, and a crash before
 * the write leaves the mark for the next start. The step marks every existing skill: a home from
 * before it had one whole `skills_registry.json`, and its first start writes each skill's own file.
 */
export const MIRROR_MIGRATIONS: readonly Migration[] = [
  {
    concern: "registry",
    summary: "the registry mirror's outbox: each skill whose mirror file is not yet rewritten since its last change",
    sql: `CREATE TABLE IF NOT EXISTS mirror_pending (name TEXT PRIMARY KEY, change INTEGER NOT NULL) STRICT;
          ${MIRRORED_TABLES.map(triggersOf).join("\n")}
          INSERT INTO mirror_pending (name, change) SELECT name, ${MARK} FROM skills WHERE true
            ON CONFLICT (name) DO UPDATE SET change = excluded.change;`,
  },
];
