/**
 * The `skills` table: one skill's record, the listings with their access filter, and the plain
 * column updates after which no health judgement is needed.
 */
import type Database from "better-sqlite3";
import { SkillNotFoundError } from "../../errors/index.js";
import { withSqlite } from "../../sqlite/index.js";
import type { ListOptions, SkillRecord } from "./records.js";
import { SELECT_SKILL, type SkillRow, toRecord } from "./row-mapping.js";

export class SkillRows {
  constructor(private readonly db: Database.Database) {}

  get(name: string): SkillRecord | undefined {
    const row = withSqlite("registry", "read a skill", () =>
      this.db.prepare<[string], SkillRow>(`${SELECT_SKILL} WHERE s.name = ?`).get(name),
    );
    return row ? toRecord(row) : undefined;
  }

  list(options: ListOptions): SkillRecord[] {
    const { where, params } = listFilter(options);
    return withSqlite("registry", "list skills", () =>
      this.db.prepare<[Record<string, string>], SkillRow>(`${SELECT_SKILL} ${where} ORDER BY s.name`).all(params).map(toRecord),
    );
  }

  /** Name and description only: no versions or grants joined, no records built. */
  describedSkills(options: ListOptions): Array<{ name: string; description: string }> {
    const { where, params } = listFilter(options);
    return withSqlite("registry", "list skill descriptions", () =>
      this.db
        .prepare<[Record<string, string>], { name: string; description: string }>(
          `SELECT s.name, s.description FROM skills s ${where} ORDER BY s.name`,
        )
        .all(params),
    );
  }

  isEmpty(): boolean {
    return withSqlite("registry", "count skills", () => this.db.prepare("SELECT 1 FROM skills LIMIT 1").get() === undefined);
  }

  /**
   * `UPDATE skills SET <assignments>` for one skill and its record afterwards, in one transaction;
   * `action` names the work in a SQLite error. An unknown name is a SkillNotFoundError.
   */
  update(action: string, name: string, assignments: string, values: readonly (string | number)[]): SkillRecord {
    return withSqlite("registry", action, () =>
      this.db.transaction(() => {
        this.db.prepare(`UPDATE skills SET ${assignments} WHERE name = ?`).run(...values, name);
        const updated = this.get(name);
        if (!updated) throw new SkillNotFoundError(name);
        return updated;
      })(),
    );
  }

  /** Marks a skill as created by the service (pattern promotion: docs/learning.md#promotion). */
  markAutoCreated(name: string, at: Date): SkillRecord {
    return withSqlite("registry", "mark a skill auto-created", () => {
      this.db.prepare("UPDATE skills SET auto_created = 1, updated_at = ? WHERE name = ?").run(at.getTime(), name);
      const updated = this.get(name);
      if (!updated) throw new SkillNotFoundError(name);
      return updated;
    });
  }
}

/** The WHERE clause of a listing (over `skills s`) and its parameters. */
function listFilter(options: ListOptions): { where: string; params: Record<string, string> } {
  const conditions: string[] = [];
  const params: Record<string, string> = {};
  if (!options.includeInactive) conditions.push("s.status NOT IN ('retired', 'deleted')");
  if (options.visibleTo !== undefined) {
    // The access table (docs/security.md#the-access-table) as one condition.
    conditions.push(
      `(s.owner = @viewer OR s.visibility = 'public' OR s.is_system = 1 OR EXISTS (
          SELECT 1 FROM skill_grants g WHERE g.name = s.name
             AND ((g.grantee_kind = 'agent' AND g.grantee = @viewer) OR (g.grantee_kind = 'user' AND g.grantee = @user))))`,
    );
    params.viewer = options.visibleTo;
    // No user: a value no grant holds (user ids are never empty).
    params.user = options.visibleToUser ?? "";
  }
  if (options.owner !== undefined) {
    conditions.push("s.owner = @owner");
    params.owner = options.owner;
  }
  return { where: conditions.length > 0 ? `WHERE ${conditions.join(" AND ")}` : "", params };
}
