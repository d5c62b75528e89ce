/**
 * The immutable version history (`skill_versions`) and which version of a skill is active: commit
 * a new version, roll back (or forward) to a committed one.
 */
import type Database from "better-sqlite3";
import { SkillVersionNotFoundError } from "../../errors/index.js";
import { withSqlite } from "../../sqlite/index.js";
import type { SkillAccess, SkillRecord, VersionRecord } from "./records.js";
import { SELECT_VERSION, storedVisibility, toVersionRecord, type VersionRow } from "./row-mapping.js";
import type { SkillRows } from "./skill-rows.js";
import type { StatusRows } from "./skill-status.js";

export class VersionHistory {
  constructor(
    private readonly db: Database.Database,
    private readonly rows: SkillRows,
    private readonly status: StatusRows,
  ) {}

  nextVersion(name: string): number {
    const row = withSqlite("registry", "read the latest version", () =>
      this.db.prepare<[string], { v: number | null }>("SELECT MAX(version) AS v FROM skill_versions WHERE name = ?").get(name),
    );
    return (row?.v ?? 0) + 1;
  }

  versions(name: string, page: { readonly after?: number; readonly limit?: number } = {}): VersionRecord[] {
    return withSqlite("registry", "list versions", () =>
      this.db
        .prepare<[string, number, number], VersionRow>(`${SELECT_VERSION} WHERE v.name = ? AND v.version > ? ORDER BY v.version LIMIT ?`)
        .all(name, page.after ?? 0, page.limit ?? -1)
        .map(toVersionRecord),
    );
  }

  version(name: string, version: number): VersionRecord | undefined {
    const row = withSqlite("registry", "read a version", () =>
      this.db.prepare<[string, number], VersionRow>(`${SELECT_VERSION} WHERE v.name = ? AND v.version = ?`).get(name, version),
    );
    return row ? toVersionRecord(row) : undefined;
  }

  /**
   * Environment id → how many versions (of any skill, in any status) refer to it: every version
   * may run again (rollback, restore), so each keeps its environment from removal.
   */
  environmentUses(): Map<string, number> {
    const rows = withSqlite("registry", "count versions by environment", () =>
      this.db
        .prepare<[], { id: string; n: number }>(
          "SELECT environment_id AS id, COUNT(*) AS n FROM skill_versions WHERE environment_id != '' GROUP BY environment_id",
        )
        .all(),
    );
    return new Map(rows.map((row) => [row.id, row.n]));
  }

  /** The version row and the skill row (created or reset to a fresh health record) in one transaction. */
  commit(next: VersionRecord, access: SkillAccess): SkillRecord {
    return withSqlite("registry", "commit a skill version", () =>
      this.db.transaction(() => {
        this.insert(next);
        const at = next.createdAt.getTime();
        this.db
          .prepare(
            `INSERT INTO skills (name, description, parameters_schema, test_payload, status, status_reason,
                                 health_warning, version, content_hash, usage_count, failure_count,
                                 created_at, updated_at, status_changed_at, owner, visibility, activated_at, streak_since)
             VALUES (@name, @description, @schema, @payload, 'active', '', '', @version, @hash, 0, 0, @at, @at, @at, @owner, @visibility, @at, @at)
             ON CONFLICT (name) DO UPDATE SET
               description = excluded.description,
               parameters_schema = excluded.parameters_schema,
               test_payload = excluded.test_payload,
               status = 'active', status_reason = '', health_warning = '',
               version = excluded.version,
               content_hash = excluded.content_hash,
               failure_count = 0,
               activated_at = excluded.activated_at, streak_since = excluded.streak_since,
               updated_at = excluded.updated_at,
               status_changed_at = excluded.status_changed_at,
               owner = excluded.owner,
               visibility = excluded.visibility`,
          )
          .run({
            name: next.name,
            description: next.description,
            schema: next.parametersSchema,
            payload: next.testPayload,
            version: next.version,
            hash: next.contentHash,
            at,
            owner: access.owner,
            visibility: storedVisibility(access.visibility),
          });
        return this.rows.get(next.name) as SkillRecord;
      })(),
    );
  }

  activate(name: string, version: number, at: Date): SkillRecord {
    return withSqlite("registry", "activate a version", () =>
      this.db.transaction(() => {
        const target = this.version(name, version);
        if (!target) throw new SkillVersionNotFoundError(name, version);
        this.db
          .prepare(
            `UPDATE skills SET description = ?, parameters_schema = ?, test_payload = ?, version = ?, content_hash = ?,
                               status = 'active', status_reason = '', failure_count = 0,
                               updated_at = ?, status_changed_at = ?, activated_at = ?, streak_since = ?
             WHERE name = ?`,
          )
          .run(
            target.description,
            target.parametersSchema,
            target.testPayload,
            version,
            target.contentHash,
            at.getTime(),
            at.getTime(),
            at.getTime(),
            at.getTime(),
            name,
          );
        return this.status.reevaluate(name, at);
      })(),
    );
  }

  /** One version row and its test files' rows; a number another writer already took fails. Call inside a transaction. */
  insert(next: VersionRecord): void {
    this.db
      .prepare(
        `INSERT INTO skill_versions (name, version, description, parameters_schema, test_payload, content_hash, origin, created_at,
                                     requirements, system_packages, environment_id, secrets, network_allow)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        next.name,
        next.version,
        next.description,
        next.parametersSchema,
        next.testPayload,
        next.contentHash,
        next.origin,
        next.createdAt.getTime(),
        JSON.stringify(next.packages?.requirements ?? []),
        JSON.stringify(next.packages?.systemPackages ?? []),
        next.packages?.environmentId ?? "",
        JSON.stringify(next.secrets ?? []),
        JSON.stringify(next.networkAllow ?? []),
      );
    if (!next.testFiles || next.testFiles.length === 0) return;
    const insertFile = this.db.prepare(
      `INSERT INTO skill_version_test_files (name, version, position, path, size_bytes, sha256) VALUES (?, ?, ?, ?, ?, ?)`,
    );
    for (const [position, file] of next.testFiles.entries()) {
      insertFile.run(next.name, next.version, position, file.path, file.sizeBytes, file.sha256);
    }
  }
}
