/**
 * A whole skill written at once, as a legacy migration or a rebuild from the canonical directory
 * finds it: its versions, its row with counters and status as they were, and its grants.
 */
import type Database from "better-sqlite3";
import { InternalError } from "../../errors/index.js";
import { withSqlite } from "../../sqlite/index.js";
import type { ImportedSkill, SkillRecord } from "./records.js";
import { storedVisibility } from "./row-mapping.js";
import type { SharingRows } from "./sharing-rows.js";
import type { SkillRows } from "./skill-rows.js";
import type { VersionHistory } from "./version-history.js";

export interface ImportTables {
  readonly db: Database.Database;
  readonly rows: SkillRows;
  readonly history: VersionHistory;
  readonly sharing: SharingRows;
}

/** One transaction; an existing name fails on the skills row's key. */
export function importSkill({ db, rows, history, sharing }: ImportTables, skill: ImportedSkill): SkillRecord {
  return withSqlite("registry", "import a skill", () =>
    db.transaction(() => {
      for (const version of skill.versions) history.insert(version);
      const active = skill.versions.find((v) => v.version === skill.activeVersion);
      if (!active) throw new InternalError(`import of "${skill.name}": active version ${skill.activeVersion} missing`);
      const created = skill.createdAt.getTime();
      const now = Date.now();
      db.prepare(
        `INSERT INTO skills (name, description, parameters_schema, test_payload, status, status_reason, version,
                             content_hash, usage_count, failure_count, protected, auto_created,
                             created_at, updated_at, status_changed_at, last_invoked_at, owner, visibility,
                             is_system, enabled, disabled_by)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        skill.name,
        active.description,
        active.parametersSchema,
        active.testPayload,
        skill.status,
        skill.statusReason,
        skill.activeVersion,
        active.contentHash,
        skill.usageCount,
        skill.failureCount,
        skill.protected ? 1 : 0,
        skill.autoCreated ? 1 : 0,
        created,
        now,
        now,
        skill.lastInvokedAt?.getTime() ?? null,
        skill.access.owner,
        storedVisibility(skill.access.visibility),
        skill.sharing?.system ? 1 : 0,
        skill.sharing?.enabled === false ? 0 : 1,
        skill.sharing?.enabled === false ? skill.sharing.disabledBy : "",
      );
      for (const grant of skill.sharing?.grants ?? []) sharing.put(grant);
      return rows.get(skill.name) as SkillRecord;
    })(),
  );
}
