/**
 * Who owns a skill and who may see or use it (docs/security.md#grants-and-visibility): owner and
 * visibility, the system flag, the on/off switch (columns of `skills`) and the `skill_grants` rows.
 */
import type Database from "better-sqlite3";
import { SkillNotFoundError } from "../../errors/index.js";
import { withSqlite } from "../../sqlite/index.js";
import type { GranteeKind, SkillAccess, SkillGrant, SkillRecord } from "./records.js";
import { storedVisibility } from "./row-mapping.js";
import type { SkillRows } from "./skill-rows.js";

export class SharingRows {
  constructor(
    private readonly db: Database.Database,
    private readonly rows: SkillRows,
  ) {}

  setAccess(name: string, access: SkillAccess, at: Date): SkillRecord {
    return this.rows.update("change a skill's owner or visibility", name, "owner = ?, visibility = ?, updated_at = ?", [
      access.owner,
      storedVisibility(access.visibility),
      at.getTime(),
    ]);
  }

  setSystem(name: string, system: boolean, at: Date): SkillRecord {
    return this.rows.update("mark a system skill", name, "is_system = ?, updated_at = ?", [system ? 1 : 0, at.getTime()]);
  }

  setEnabled(name: string, enabled: boolean, by: string, at: Date): SkillRecord {
    return this.rows.update("switch a skill on or off", name, "enabled = ?, disabled_by = ?, updated_at = ?", [
      enabled ? 1 : 0,
      enabled ? "" : by,
      at.getTime(),
    ]);
  }

  grant(grant: SkillGrant): SkillRecord {
    return withSqlite("registry", "grant a skill", () =>
      this.db.transaction(() => {
        this.put(grant);
        this.db.prepare("UPDATE skills SET updated_at = ? WHERE name = ?").run(grant.grantedAt.getTime(), grant.name);
        return this.rows.get(grant.name) as SkillRecord;
      })(),
    );
  }

  revoke(name: string, kind: GranteeKind, grantee: string, at: Date): { skill: SkillRecord; revoked: boolean } {
    return withSqlite("registry", "revoke a grant", () =>
      this.db.transaction(() => {
        const revoked =
          this.db.prepare("DELETE FROM skill_grants WHERE name = ? AND grantee_kind = ? AND grantee = ?").run(name, kind, grantee).changes >
          0;
        if (revoked) this.db.prepare("UPDATE skills SET updated_at = ? WHERE name = ?").run(at.getTime(), name);
        const skill = this.rows.get(name);
        if (!skill) throw new SkillNotFoundError(name);
        return { skill, revoked };
      })(),
    );
  }

  /** Removes every grant of a skill (DeleteSkill, docs/security.md#delete-revokes-grants); returns what was removed. */
  revokeAll(name: string, at: Date): { skill: SkillRecord; revoked: readonly SkillGrant[] } {
    return withSqlite("registry", "revoke a skill's grants", () =>
      this.db.transaction(() => {
        const before = this.rows.get(name);
        if (!before) throw new SkillNotFoundError(name);
        if (before.grants.length > 0) {
          this.db.prepare("DELETE FROM skill_grants WHERE name = ?").run(name);
          this.db.prepare("UPDATE skills SET updated_at = ? WHERE name = ?").run(at.getTime(), name);
        }
        return { skill: this.rows.get(name) as SkillRecord, revoked: before.grants };
      })(),
    );
  }

  /** Adds or replaces (same grantee) one grant row; call inside a transaction. */
  put(grant: SkillGrant): void {
    this.db
      .prepare(
        `INSERT INTO skill_grants (name, grantee_kind, grantee, version, granted_by, granted_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (name, grantee_kind, grantee) DO UPDATE SET
           version = excluded.version, granted_by = excluded.granted_by, granted_at = excluded.granted_at`,
      )
      .run(grant.name, grant.granteeKind, grant.grantee, grant.version ?? null, grant.grantedBy, grant.grantedAt.getTime());
  }
}
