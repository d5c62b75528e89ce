import Database from "better-sqlite3";
import { status } from "@grpc/grpc-js";
import { SkillEngineError } from "../errors.js";

export type SkillStatus = "active" | "degraded";

/** After this many consecutive failed invocations a skill is marked degraded (seed 000). */
export const DEGRADE_AFTER_CONSECUTIVE_FAILURES = 3;

/** A registered skill as the registry (the source of truth) knows it. */
export interface SkillRecord {
  readonly name: string;
  readonly description: string;
  /** JSON Schema, as the JSON text the caller sent. */
  readonly parametersSchema: string;
  readonly status: SkillStatus;
  readonly version: number;
  readonly contentHash: string;
  readonly usageCount: number;
  readonly failureCount: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly lastInvokedAt: Date | undefined;
}

export interface NewVersion {
  readonly name: string;
  readonly version: number;
  readonly description: string;
  readonly parametersSchema: string;
  readonly contentHash: string;
  readonly at: Date;
}

/** One invocation's outcome, as recorded for telemetry. */
export interface InvocationOutcome {
  readonly name: string;
  readonly version: number;
  readonly at: Date;
  readonly success: boolean;
  readonly durationMs: number;
  readonly exitCode: number;
  readonly timedOut: boolean;
  readonly oomKilled: boolean;
  readonly errorSummary: string;
  readonly caller: string;
}

interface SkillRow {
  name: string;
  description: string;
  parameters_schema: string;
  status: string;
  version: number;
  content_hash: string;
  usage_count: number;
  failure_count: number;
  created_at: number;
  updated_at: number;
  last_invoked_at: number | null;
}

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE skills (
     name TEXT PRIMARY KEY,
     description TEXT NOT NULL,
     parameters_schema TEXT NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('active', 'degraded')),
     version INTEGER NOT NULL CHECK (version >= 1),
     content_hash TEXT NOT NULL,
     usage_count INTEGER NOT NULL DEFAULT 0,
     failure_count INTEGER NOT NULL DEFAULT 0,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL,
     last_invoked_at INTEGER
   ) STRICT;
   CREATE TABLE skill_versions (
     name TEXT NOT NULL,
     version INTEGER NOT NULL,
     description TEXT NOT NULL,
     parameters_schema TEXT NOT NULL,
     content_hash TEXT NOT NULL,
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
   CREATE INDEX invocations_by_skill ON invocations (skill_name, invoked_at);`,
];

/**
 * The registry in SQLite (`registry.db`, WAL): skills, their version history and every
 * invocation's outcome. It is the source of truth; the canonical directory follows it.
 */
export class SkillRegistry {
  private constructor(private readonly db: Database.Database) {}

  static open(file: string): SkillRegistry {
    try {
      const db = new Database(file);
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = FULL");
      db.pragma("foreign_keys = ON");
      db.pragma("busy_timeout = 5000");
      migrate(db);
      return new SkillRegistry(db);
    } catch (error) {
      throw fromSqliteError(error, `open the registry at ${file}`);
    }
  }

  get(name: string): SkillRecord | undefined {
    const row = this.guard("read a skill", () =>
      this.db.prepare<[string], SkillRow>("SELECT * FROM skills WHERE name = ?").get(name),
    );
    return row ? toRecord(row) : undefined;
  }

  list(): SkillRecord[] {
    return this.guard("list skills", () =>
      this.db.prepare<[], SkillRow>("SELECT * FROM skills ORDER BY name").all().map(toRecord),
    );
  }

  isEmpty(): boolean {
    return this.guard("count skills", () => this.db.prepare("SELECT 1 FROM skills LIMIT 1").get() === undefined);
  }

  /** The number the next registration of `name` will get. */
  nextVersion(name: string): number {
    const row = this.guard("read the latest version", () =>
      this.db
        .prepare<[string], { v: number | null }>("SELECT MAX(version) AS v FROM skill_versions WHERE name = ?")
        .get(name),
    );
    return (row?.v ?? 0) + 1;
  }

  /** Makes `version` the active one; fails if another writer already took that number. */
  commitVersion(next: NewVersion): SkillRecord {
    const at = next.at.getTime();
    return this.guard("commit a skill version", () =>
      this.db.transaction(() => {
        this.db
          .prepare(
            `INSERT INTO skill_versions (name, version, description, parameters_schema, content_hash, created_at)
             VALUES (?, ?, ?, ?, ?, ?)`,
          )
          .run(next.name, next.version, next.description, next.parametersSchema, next.contentHash, at);
        this.db
          .prepare(
            `INSERT INTO skills (name, description, parameters_schema, status, version, content_hash,
                                 usage_count, failure_count, created_at, updated_at)
             VALUES (@name, @description, @schema, 'active', @version, @hash, 0, 0, @at, @at)
             ON CONFLICT (name) DO UPDATE SET
               description = excluded.description,
               parameters_schema = excluded.parameters_schema,
               status = 'active',
               version = excluded.version,
               content_hash = excluded.content_hash,
               failure_count = 0,
               updated_at = excluded.updated_at`,
          )
          .run({
            name: next.name,
            description: next.description,
            schema: next.parametersSchema,
            version: next.version,
            hash: next.contentHash,
            at,
          });
        return this.get(next.name) as SkillRecord;
      })(),
    );
  }

  /** Records an invocation and updates the seed-000 counters; returns the updated skill. */
  recordInvocation(outcome: InvocationOutcome): SkillRecord | undefined {
    const at = outcome.at.getTime();
    return this.guard("record an invocation", () =>
      this.db.transaction(() => {
        this.db
          .prepare(
            `INSERT INTO invocations (skill_name, version, invoked_at, success, duration_ms, exit_code,
                                      timed_out, oom_killed, error_summary, caller)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(
            outcome.name,
            outcome.version,
            at,
            outcome.success ? 1 : 0,
            outcome.durationMs,
            outcome.exitCode,
            outcome.timedOut ? 1 : 0,
            outcome.oomKilled ? 1 : 0,
            outcome.errorSummary,
            outcome.caller,
          );
        if (outcome.success) {
          this.db
            .prepare(
              `UPDATE skills SET usage_count = usage_count + 1, failure_count = 0, status = 'active',
                                 last_invoked_at = ?, updated_at = ? WHERE name = ?`,
            )
            .run(at, at, outcome.name);
        } else {
          this.db
            .prepare(
              `UPDATE skills SET failure_count = failure_count + 1,
                                 status = CASE WHEN failure_count + 1 >= ? THEN 'degraded' ELSE status END,
                                 last_invoked_at = ?, updated_at = ? WHERE name = ?`,
            )
            .run(DEGRADE_AFTER_CONSECUTIVE_FAILURES, at, at, outcome.name);
        }
        return this.get(outcome.name);
      })(),
    );
  }

  /** Invocation rows of a skill, newest first. */
  invocations(name: string, limit = 100): Array<InvocationOutcome> {
    return this.guard("read invocations", () =>
      this.db
        .prepare<[string, number], Record<string, number | string>>(
          "SELECT * FROM invocations WHERE skill_name = ? ORDER BY id DESC LIMIT ?",
        )
        .all(name, limit)
        .map((row) => ({
          name: String(row.skill_name),
          version: Number(row.version),
          at: new Date(Number(row.invoked_at)),
          success: row.success === 1,
          durationMs: Number(row.duration_ms),
          exitCode: Number(row.exit_code),
          timedOut: row.timed_out === 1,
          oomKilled: row.oom_killed === 1,
          errorSummary: String(row.error_summary),
          caller: String(row.caller),
        })),
    );
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  private guard<T>(action: string, work: () => T): T {
    try {
      return work();
    } catch (error) {
      throw fromSqliteError(error, action);
    }
  }
}

function migrate(db: Database.Database): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  for (let version = current; version < MIGRATIONS.length; version++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[version] as string);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
}

function toRecord(row: SkillRow): SkillRecord {
  return {
    name: row.name,
    description: row.description,
    parametersSchema: row.parameters_schema,
    status: row.status === "degraded" ? "degraded" : "active",
    version: row.version,
    contentHash: row.content_hash,
    usageCount: row.usage_count,
    failureCount: row.failure_count,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    lastInvokedAt: row.last_invoked_at === null ? undefined : new Date(row.last_invoked_at),
  };
}

/** The one place where SQLite failures become service errors with a gRPC status. */
export function fromSqliteError(error: unknown, action: string): SkillEngineError {
  if (error instanceof SkillEngineError) return error;
  const code = (error as { code?: string }).code ?? "";
  const message = error instanceof Error ? error.message : String(error);
  if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") {
    return new SkillEngineError(status.UNAVAILABLE, `the registry is busy; could not ${action}, retry`, { cause: error });
  }
  if (code === "SQLITE_FULL") {
    return new SkillEngineError(status.RESOURCE_EXHAUSTED, `the disk holding the registry is full; could not ${action}`, {
      cause: error,
    });
  }
  if (code.startsWith("SQLITE_CONSTRAINT")) {
    return new SkillEngineError(status.ABORTED, `a concurrent change conflicted; could not ${action}, retry`, {
      cause: error,
    });
  }
  return new SkillEngineError(status.INTERNAL, `registry error: could not ${action}: ${message}`, { cause: error });
}
