import type Database from "better-sqlite3";
import { withSqlite } from "../sqlite/index.js";

/** An executable folder runs its entrypoint; an instructions-only folder is read, never run. */
export type FolderSkillKind = "executable" | "instructions";

/** What one registered version of a folder skill came from (docs/skill-sources.md#registration). */
export interface SourceVersion {
  readonly name: string;
  readonly version: number;
  readonly skillId: string;
  readonly kind: FolderSkillKind;
  /** The entrypoint's path inside the folder; empty for instructions. */
  readonly entrypoint: string;
  /** The configured directory it was discovered in; empty for an imported bundle. */
  readonly root: string;
  /** The folder it was discovered in (or the bundle's name for an import). */
  readonly folder: string;
  /** SHA-256 over the folder's files (discovery's content hash): an edit changes it. */
  readonly folderHash: string;
  readonly createdAt: Date;
}

interface SourceRow {
  name: string;
  version: number;
  skill_id: string;
  kind: string;
  entrypoint: string;
  root: string;
  folder: string;
  folder_hash: string;
  created_at: number;
}

/**
 * Folder skills' versions and the ids of read-only folders, in registry.db (tables of this
 * concern, created by its migrations in src/schema). A registry version with no row here is not a folder skill.
 */
export class SourceStore {
  constructor(private readonly db: Database.Database) {}

  /** Written before the registry commits the version, so a committed version always has its row. */
  record(entry: SourceVersion): void {
    withSqlite("registry", "record a folder skill version", () =>
      this.db
        .prepare(
          `INSERT OR REPLACE INTO skill_source_versions (name, version, skill_id, kind, entrypoint, root, folder, folder_hash, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          entry.name,
          entry.version,
          entry.skillId,
          entry.kind,
          entry.entrypoint,
          entry.root,
          entry.folder,
          entry.folderHash,
          entry.createdAt.getTime(),
        ),
    );
  }

  /** The row of one version, if that version came from a folder. */
  get(name: string, version: number): SourceVersion | undefined {
    const row = withSqlite("registry", "read a folder skill version", () =>
      this.db.prepare<[string, number], SourceRow>("SELECT * FROM skill_source_versions WHERE name = ? AND version = ?").get(name, version),
    );
    return row ? toSourceVersion(row) : undefined;
  }

  /** The newest version of `name` that came from a folder. */
  latest(name: string): SourceVersion | undefined {
    const row = withSqlite("registry", "read a folder skill version", () =>
      this.db.prepare<[string], SourceRow>("SELECT * FROM skill_source_versions WHERE name = ? ORDER BY version DESC LIMIT 1").get(name),
    );
    return row ? toSourceVersion(row) : undefined;
  }

  /** The newest row of every folder skill name. */
  latestOfAll(): SourceVersion[] {
    return withSqlite("registry", "list folder skills", () =>
      this.db
        .prepare<[], SourceRow>(
          `SELECT s.* FROM skill_source_versions s
           WHERE s.version = (SELECT MAX(version) FROM skill_source_versions t WHERE t.name = s.name) ORDER BY s.name`,
        )
        .all()
        .map(toSourceVersion),
    );
  }

  /** A folder moved or renamed: the rows keep their id and version, and point at where it is now. */
  moveFolder(name: string, version: number, root: string, folder: string): void {
    withSqlite("registry", "update a folder skill's location", () =>
      this.db
        .prepare("UPDATE skill_source_versions SET root = ?, folder = ? WHERE name = ? AND version = ?")
        .run(root, folder, name, version),
    );
  }

  /** The id kept for a folder whose `.skill_id` could not be written. */
  rememberedId(folder: string): string | undefined {
    return withSqlite(
      "registry",
      "read a folder's id",
      () => this.db.prepare<[string], { skill_id: string }>("SELECT skill_id FROM skill_source_ids WHERE folder = ?").get(folder)?.skill_id,
    );
  }

  rememberId(folder: string, skillId: string): void {
    withSqlite("registry", "remember a folder's id", () =>
      this.db.prepare("INSERT OR REPLACE INTO skill_source_ids (folder, skill_id) VALUES (?, ?)").run(folder, skillId),
    );
  }
}

function toSourceVersion(row: SourceRow): SourceVersion {
  return {
    name: row.name,
    version: row.version,
    skillId: row.skill_id,
    kind: row.kind === "executable" ? "executable" : "instructions",
    entrypoint: row.entrypoint,
    root: row.root,
    folder: row.folder,
    folderHash: row.folder_hash,
    createdAt: new Date(row.created_at),
  };
}
