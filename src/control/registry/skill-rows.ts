/**
 * The `skills` table: one skill's record, the listings with their access filter, and the plain
 * column updates after which no health judgement is needed.
 */
import type Database from "better-sqlite3";
import { SkillNotFoundError } from "../../errors/index.js";
import { withSqlite } from "../../sqlite/index.js";
import type { LibraryKind, LibraryOptions, ListOptions, SkillFileState, SkillRecord } from "./records.js";
import { SKILL_STATUSES } from "./skill-health.js";
import { SELECT_SKILL, SELECT_SKILL_COLUMNS, type SkillRow, toRecord } from "./row-mapping.js";

/** The folder and dependency declarations of each skill's active version, joined on their primary keys. */
const KIND_JOINS = `LEFT JOIN skill_source_versions sv ON sv.name = s.name AND sv.version = s.version
                    LEFT JOIN skill_dependencies d ON d.name = s.name AND d.version = s.version`;

/** A skill's kind as the console shows it: a folder's kind first, else what its active version declares. */
const KIND_OF_ROW = `(CASE sv.kind WHEN 'executable' THEN 'directory' WHEN 'instructions' THEN 'instructions'
                      ELSE COALESCE(d.kind, 'plain') END)`;

export class SkillRows {
  constructor(private readonly db: Database.Database) {}

  get(name: string): SkillRecord | undefined {
    const row = withSqlite("registry", "read a skill", () =>
      this.db.prepare<[string], SkillRow>(`${SELECT_SKILL} WHERE s.name = ?`).get(name),
    );
    return row ? toRecord(row) : undefined;
  }

  /** Ordered by name; with `after` and `limit`, one keyset page of it (the primary key's index walks it). */
  list(options: ListOptions): SkillRecord[] {
    const { where, params } = listFilter(options);
    const limit = options.limit === undefined ? "" : ` LIMIT ${Math.max(0, Math.floor(options.limit))}`;
    return withSqlite("registry", "list skills", () =>
      this.db.prepare<[Record<string, string>], SkillRow>(`${SELECT_SKILL} ${where} ORDER BY s.name${limit}`).all(params).map(toRecord),
    );
  }

  /**
   * A page of the console's library (docs/console.md#library) in one query: the listing's filters,
   * a status and a kind, the kind joined from the folder and dependency declarations of each
   * skill's active version rather than looked up a skill at a time. `before` reads backwards from a
   * name (the previous page); rows come back ascending either way.
   */
  library(options: LibraryOptions): Array<{ skill: SkillRecord; kind: LibraryKind }> {
    const { where, params } = listFilter(options);
    const conditions = where === "" ? [] : [where.slice("WHERE ".length)];
    if (options.status !== undefined) {
      conditions.push("s.status = @status");
      params.status = options.status;
    }
    if (options.kind !== undefined) {
      conditions.push(`${KIND_OF_ROW} = @kind`);
      params.kind = options.kind;
    }
    if (options.before !== undefined) {
      conditions.push("s.name < @before");
      params.before = options.before;
    }
    const order = options.before !== undefined ? "DESC" : "ASC";
    const limit = options.limit === undefined ? "" : ` LIMIT ${Math.max(0, Math.floor(options.limit))}`;
    const sql = `SELECT * FROM (${SELECT_SKILL_COLUMNS}, ${KIND_OF_ROW} AS library_kind FROM skills s ${KIND_JOINS}
                  ${conditions.length > 0 ? `WHERE ${conditions.join(" AND ")}` : ""} ORDER BY s.name ${order}${limit})
                 ORDER BY name`;
    const rows = withSqlite("registry", "read a library page", () =>
      this.db.prepare<[Record<string, string>], SkillRow & { library_kind: LibraryKind }>(sql).all(params),
    );
    return rows.map((row) => ({ skill: toRecord(row), kind: row.library_kind }));
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

  /** {@link describedSkills} of the named skills only (one query, whatever the library's size), in no order. */
  describedSkillsNamed(names: readonly string[], options: ListOptions): Array<{ name: string; description: string }> {
    if (names.length === 0) return [];
    const { where, params } = listFilter(options);
    const named = `s.name IN (SELECT value FROM json_each(@names))`;
    return withSqlite("registry", "read skill descriptions", () =>
      this.db
        .prepare<[Record<string, string>], { name: string; description: string }>(
          `SELECT s.name, s.description FROM skills s ${where === "" ? `WHERE ${named}` : `${where} AND ${named}`}`,
        )
        .all({ ...params, names: JSON.stringify(names) }),
    );
  }

  isEmpty(): boolean {
    return withSqlite("registry", "count skills", () => this.db.prepare("SELECT 1 FROM skills LIMIT 1").get() === undefined);
  }

  /** How many skills, in every status. */
  count(): number {
    return withSqlite("registry", "count skills", () => (this.db.prepare("SELECT COUNT(*) AS n FROM skills").get() as { n: number }).n);
  }

  /** What start-up reconciliation checks the files against, for every skill by name, without building records. */
  fileStates(): SkillFileState[] {
    const rows = withSqlite("registry", "read skills' file states", () =>
      this.db
        .prepare<[], { name: string; status: string; version: number; content_hash: string; latest_version: number | null }>(
          `SELECT s.name, s.status, s.version, s.content_hash,
                  (SELECT MAX(v.version) FROM skill_versions v WHERE v.name = s.name) AS latest_version
             FROM skills s ORDER BY s.name`,
        )
        .all(),
    );
    return rows.map((row) => ({
      name: row.name,
      status: SKILL_STATUSES.find((s) => s === row.status) ?? "active",
      version: row.version,
      latestVersion: row.latest_version ?? row.version,
      contentHash: row.content_hash,
    }));
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
  if (options.after !== undefined) {
    conditions.push("s.name > @after");
    params.after = options.after;
  }
  return { where: conditions.length > 0 ? `WHERE ${conditions.join(" AND ")}` : "", params };
}
