import type Database from "better-sqlite3";
import { withSqlite } from "../sqlite/index.js";
import { type EnvironmentLock, parseLock, serializeLock } from "./environment-lock.js";

/** `ready`: built and on disk; `missing`: known by its lock, its directory gone; `failed`: its last (re)build failed. */
export type EnvironmentStatus = "ready" | "failed" | "missing";

/** A `skill_environments` row (registry.db step 11, src/schema/environment-tables.ts). */
export interface EnvironmentRecord {
  readonly id: string;
  readonly requirements: readonly string[];
  readonly systemPackages: readonly string[];
  /** Undefined until a build has succeeded once. */
  readonly lock: EnvironmentLock | undefined;
  readonly sizeBytes: number;
  readonly status: EnvironmentStatus;
  /** The last failure's one-line cause; empty when the last build succeeded. */
  readonly error: string;
  readonly builtAt: Date;
  readonly lastUsedAt: Date;
}

interface EnvironmentRow {
  id: string;
  requirements: string;
  system_packages: string;
  lock: string;
  size_bytes: number;
  status: string;
  error: string;
  built_at: number;
  last_used_at: number;
}

/** The environments table; times are epoch milliseconds. */
export class EnvironmentStore {
  constructor(private readonly db: Database.Database) {}

  get(id: string): EnvironmentRecord | undefined {
    const row = withSqlite("registry", "read an environment", () =>
      this.db.prepare<[string], EnvironmentRow>("SELECT * FROM skill_environments WHERE id = ?").get(id),
    );
    return row === undefined ? undefined : fromRow(row);
  }

  list(): EnvironmentRecord[] {
    return withSqlite("registry", "list environments", () =>
      this.db.prepare<[], EnvironmentRow>("SELECT * FROM skill_environments ORDER BY id").all(),
    ).map(fromRow);
  }

  /** A successful build: the row is ready with its lock and size, whatever it was before. */
  saveReady(record: {
    readonly id: string;
    readonly requirements: readonly string[];
    readonly systemPackages: readonly string[];
    readonly lock: EnvironmentLock;
    readonly sizeBytes: number;
    readonly at: Date;
  }): void {
    withSqlite("registry", "record an environment", () =>
      this.db
        .prepare(
          `INSERT INTO skill_environments (id, requirements, system_packages, lock, size_bytes, status, error, built_at, last_used_at)
           VALUES (@id, @requirements, @systemPackages, @lock, @sizeBytes, 'ready', '', @at, @at)
           ON CONFLICT (id) DO UPDATE SET lock = excluded.lock, size_bytes = excluded.size_bytes, status = 'ready', error = '',
             built_at = excluded.built_at, last_used_at = excluded.last_used_at`,
        )
        .run({
          id: record.id,
          requirements: JSON.stringify(record.requirements),
          systemPackages: JSON.stringify(record.systemPackages),
          lock: serializeLock(record.lock),
          sizeBytes: record.sizeBytes,
          at: record.at.getTime(),
        }),
    );
  }

  /** A known environment whose rebuild failed, or whose directory is gone: its lock is kept for the next try. */
  setStatus(id: string, status: "failed" | "missing", error = ""): void {
    withSqlite("registry", "record an environment's status", () =>
      this.db.prepare("UPDATE skill_environments SET status = ?, error = ? WHERE id = ?").run(status, error, id),
    );
  }

  touch(id: string, at: Date): void {
    withSqlite("registry", "record an environment's use", () =>
      this.db.prepare("UPDATE skill_environments SET last_used_at = ? WHERE id = ?").run(at.getTime(), id),
    );
  }

  remove(id: string): void {
    withSqlite("registry", "remove an environment", () => this.db.prepare("DELETE FROM skill_environments WHERE id = ?").run(id));
  }
}

function fromRow(row: EnvironmentRow): EnvironmentRecord {
  return {
    id: row.id,
    requirements: JSON.parse(row.requirements) as string[],
    systemPackages: JSON.parse(row.system_packages) as string[],
    lock: row.lock === "" ? undefined : parseLock(row.lock),
    sizeBytes: row.size_bytes,
    status: row.status as EnvironmentStatus,
    error: row.error,
    builtAt: new Date(row.built_at),
    lastUsedAt: new Date(row.last_used_at),
  };
}
