import type Database from "better-sqlite3";
import { InternalError, SkillNotFoundError, SkillVersionNotFoundError } from "../../errors/index.js";
import { openRegistryDatabase, withSqlite } from "../../sqlite/index.js";
import type {
  DailyOutcome,
  ImportedSkill,
  InvocationOutcome,
  ListOptions,
  SkillAccess,
  SkillRecord,
  UsageFigures,
  VersionRecord,
} from "./records.js";
import { VERSION_ORIGINS } from "./records.js";
import { evaluateHealth, type HealthPolicy, SKILL_STATUSES, type SkillStatus, type WindowStats } from "./skill-health.js";

interface SkillRow {
  name: string;
  description: string;
  parameters_schema: string;
  test_payload: string;
  status: string;
  status_reason: string;
  health_warning: string;
  version: number;
  latest_version: number;
  content_hash: string;
  usage_count: number;
  failure_count: number;
  protected: number;
  auto_created: number;
  created_at: number;
  updated_at: number;
  status_changed_at: number;
  last_invoked_at: number | null;
  owner: string;
  visibility: string;
}

interface VersionRow {
  name: string;
  version: number;
  description: string;
  parameters_schema: string;
  test_payload: string;
  content_hash: string;
  origin: string;
  created_at: number;
}

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE skills (
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
  // Identity and scoping: skills from before it belong to the local agent and stay private.
  `ALTER TABLE skills ADD COLUMN owner TEXT NOT NULL DEFAULT 'local';
   ALTER TABLE skills ADD COLUMN visibility TEXT NOT NULL DEFAULT 'private' CHECK (visibility IN ('private', 'public'));
   CREATE INDEX skills_by_owner ON skills (owner, name);
   CREATE INDEX skills_by_visibility ON skills (visibility, name);`,
];

/** The registry's file name under `$SKILL_ENGINE_HOME`. */
export const REGISTRY_FILE = "registry.db";

const SELECT_SKILL = `SELECT s.*, (SELECT MAX(v.version) FROM skill_versions v WHERE v.name = s.name) AS latest_version
                      FROM skills s`;

const RECENT_DURATIONS = 100;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The registry in SQLite (`registry.db`, WAL): skills, their version history and every
 * invocation's outcome. It is the source of truth; the canonical directory follows it.
 */
export class SkillRegistry {
  private constructor(
    private readonly db: Database.Database,
    private readonly policy: HealthPolicy,
  ) {}

  static open(file: string, policy: HealthPolicy): SkillRegistry {
    return withSqlite("registry", `open the registry at ${file}`, () => {
      const db = openRegistryDatabase(file, { durable: true });
      migrate(db);
      return new SkillRegistry(db, policy);
    });
  }

  get(name: string): SkillRecord | undefined {
    const row = withSqlite("registry", "read a skill", () =>
      this.db.prepare<[string], SkillRow>(`${SELECT_SKILL} WHERE s.name = ?`).get(name),
    );
    return row ? toRecord(row) : undefined;
  }

  /** Skills ordered by name; retired and deleted ones only when asked for. */
  list(options: ListOptions = {}): SkillRecord[] {
    const conditions: string[] = [];
    const params: Record<string, string> = {};
    if (!options.includeInactive) conditions.push("s.status NOT IN ('retired', 'deleted')");
    if (options.visibleTo !== undefined) {
      conditions.push("(s.owner = @viewer OR s.visibility = 'public')");
      params.viewer = options.visibleTo;
    }
    if (options.owner !== undefined) {
      conditions.push("s.owner = @owner");
      params.owner = options.owner;
    }
    const where = conditions.length > 0 ? `WHERE ${conditions.join(" AND ")}` : "";
    return withSqlite("registry", "list skills", () =>
      this.db.prepare<[Record<string, string>], SkillRow>(`${SELECT_SKILL} ${where} ORDER BY s.name`).all(params).map(toRecord),
    );
  }

  isEmpty(): boolean {
    return withSqlite("registry", "count skills", () => this.db.prepare("SELECT 1 FROM skills LIMIT 1").get() === undefined);
  }

  /** The number the next version of `name` will get. */
  nextVersion(name: string): number {
    const row = withSqlite("registry", "read the latest version", () =>
      this.db.prepare<[string], { v: number | null }>("SELECT MAX(version) AS v FROM skill_versions WHERE name = ?").get(name),
    );
    return (row?.v ?? 0) + 1;
  }

  versions(name: string): VersionRecord[] {
    return withSqlite("registry", "list versions", () =>
      this.db.prepare<[string], VersionRow>("SELECT * FROM skill_versions WHERE name = ? ORDER BY version").all(name).map(toVersionRecord),
    );
  }

  version(name: string, version: number): VersionRecord | undefined {
    const row = withSqlite("registry", "read a version", () =>
      this.db.prepare<[string, number], VersionRow>("SELECT * FROM skill_versions WHERE name = ? AND version = ?").get(name, version),
    );
    return row ? toVersionRecord(row) : undefined;
  }

  /**
   * Records a new version and makes it the active one, with a fresh health record (a new
   * version gets a new chance). `access` is the skill's owner and visibility from now on. Fails
   * if another writer already took that number.
   */
  commitVersion(next: VersionRecord, access: SkillAccess): SkillRecord {
    return withSqlite("registry", "commit a skill version", () =>
      this.db.transaction(() => {
        this.insertVersion(next);
        const at = next.createdAt.getTime();
        this.db
          .prepare(
            `INSERT INTO skills (name, description, parameters_schema, test_payload, status, status_reason,
                                 health_warning, version, content_hash, usage_count, failure_count,
                                 created_at, updated_at, status_changed_at, owner, visibility)
             VALUES (@name, @description, @schema, @payload, 'active', '', '', @version, @hash, 0, 0, @at, @at, @at, @owner, @visibility)
             ON CONFLICT (name) DO UPDATE SET
               description = excluded.description,
               parameters_schema = excluded.parameters_schema,
               test_payload = excluded.test_payload,
               status = 'active', status_reason = '', health_warning = '',
               version = excluded.version,
               content_hash = excluded.content_hash,
               failure_count = 0,
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
            visibility: access.visibility,
          });
        return this.get(next.name) as SkillRecord;
      })(),
    );
  }

  /** Makes an earlier (or later) committed version the active one again (rollback). */
  activateVersion(name: string, version: number, at: Date): SkillRecord {
    return withSqlite("registry", "activate a version", () =>
      this.db.transaction(() => {
        const target = this.version(name, version);
        if (!target) throw new SkillVersionNotFoundError(name, version);
        this.db
          .prepare(
            `UPDATE skills SET description = ?, parameters_schema = ?, test_payload = ?, version = ?, content_hash = ?,
                               status = 'active', status_reason = '', failure_count = 0,
                               updated_at = ?, status_changed_at = ?
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
            name,
          );
        return this.reevaluate(name, at);
      })(),
    );
  }

  /** Records an invocation, updates the counters (docs/skill-lifecycle.md#counters) and re-judges the skill's health. */
  recordInvocation(outcome: InvocationOutcome): SkillRecord | undefined {
    const at = outcome.at.getTime();
    return withSqlite("registry", "record an invocation", () =>
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
        const counters = outcome.success ? "usage_count = usage_count + 1, failure_count = 0" : "failure_count = failure_count + 1";
        this.db.prepare(`UPDATE skills SET ${counters}, last_invoked_at = ?, updated_at = ? WHERE name = ?`).run(at, at, outcome.name);
        return this.reevaluate(outcome.name, outcome.at);
      })(),
    );
  }

  /** Sets a status that only an RPC decides (retired, deleted, or live again after a restore). */
  setStatus(name: string, next: SkillStatus, reason: string, at: Date): SkillRecord {
    return withSqlite("registry", "change a skill's status", () =>
      this.db.transaction(() => {
        this.db
          .prepare("UPDATE skills SET status = ?, status_reason = ?, updated_at = ?, status_changed_at = ? WHERE name = ?")
          .run(next, reason, at.getTime(), at.getTime(), name);
        return next === "retired" || next === "deleted" ? (this.get(name) as SkillRecord) : this.reevaluate(name, at);
      })(),
    );
  }

  /** Brings a retired or deleted skill back with a fresh failure count, then judges its health. */
  restore(name: string, reason: string, at: Date): SkillRecord {
    return withSqlite("registry", "restore a skill", () =>
      this.db.transaction(() => {
        this.db
          .prepare(
            `UPDATE skills SET status = 'active', status_reason = ?, failure_count = 0,
                               updated_at = ?, status_changed_at = ? WHERE name = ?`,
          )
          .run(reason, at.getTime(), at.getTime(), name);
        return this.reevaluate(name, at);
      })(),
    );
  }

  /** Pins or unpins a skill; its health is re-judged at once (unpinning may deprecate it). */
  setProtected(name: string, pinned: boolean, at: Date): SkillRecord {
    return withSqlite("registry", "pin a skill", () =>
      this.db.transaction(() => {
        this.db.prepare("UPDATE skills SET protected = ?, updated_at = ? WHERE name = ?").run(pinned ? 1 : 0, at.getTime(), name);
        return this.reevaluate(name, at);
      })(),
    );
  }

  /** Changes who owns a skill or who may see it. */
  setAccess(name: string, access: SkillAccess, at: Date): SkillRecord {
    return withSqlite("registry", "change a skill's owner or visibility", () =>
      this.db.transaction(() => {
        this.db
          .prepare("UPDATE skills SET owner = ?, visibility = ?, updated_at = ? WHERE name = ?")
          .run(access.owner, access.visibility, at.getTime(), name);
        const updated = this.get(name);
        if (!updated) throw new SkillNotFoundError(name);
        return updated;
      })(),
    );
  }

  /** Outcomes of the most recent invocations of `version` (the rolling window). */
  window(name: string, version: number): WindowStats {
    const row = withSqlite("registry", "read the rolling window", () =>
      this.db
        .prepare<[string, number, number], { samples: number; successes: number | null }>(
          `SELECT COUNT(*) AS samples, SUM(success) AS successes FROM (
             SELECT success FROM invocations WHERE skill_name = ? AND version = ? ORDER BY id DESC LIMIT ?)`,
        )
        .get(name, version, this.policy.windowSize),
    );
    return { samples: row?.samples ?? 0, successes: row?.successes ?? 0 };
  }

  usage(name: string, version: number, now: Date): UsageFigures {
    return withSqlite("registry", "read usage figures", () => {
      const totals = this.db
        .prepare<[number, string], { total: number; successes: number | null; recent: number | null }>(
          `SELECT COUNT(*) AS total, SUM(success) AS successes, SUM(invoked_at >= ?) AS recent
           FROM invocations WHERE skill_name = ?`,
        )
        .get(now.getTime() - 7 * DAY_MS, name);
      const durations = this.db
        .prepare<[string, number, number], { duration_ms: number }>(
          "SELECT duration_ms FROM invocations WHERE skill_name = ? AND version = ? ORDER BY id DESC LIMIT ?",
        )
        .all(name, version, RECENT_DURATIONS)
        .map((r) => r.duration_ms);
      return {
        invocationsLast7Days: totals?.recent ?? 0,
        totalInvocations: totals?.total ?? 0,
        totalSuccesses: totals?.successes ?? 0,
        recentDurationsMs: durations,
        window: this.window(name, version),
      };
    });
  }

  /**
   * The outcomes of the most recent `limit` invocations of each (name, version), oldest first: the
   * rolling window of docs/skill-lifecycle.md#rolling-window when `limit` is the window size. One
   * indexed query per key (invocations_by_skill), so a page of skills costs a page of lookups.
   */
  recentOutcomes(keys: readonly { name: string; version: number }[], limit: number): Map<string, boolean[]> {
    return withSqlite("registry", "read recent outcomes", () => {
      const statement = this.db.prepare<[string, number, number], { success: number }>(
        "SELECT success FROM invocations WHERE skill_name = ? AND version = ? ORDER BY id DESC LIMIT ?",
      );
      const outcomes = new Map<string, boolean[]>();
      for (const key of keys) {
        outcomes.set(
          key.name,
          statement
            .all(key.name, key.version, limit)
            .map((row) => row.success === 1)
            .reverse(),
        );
      }
      return outcomes;
    });
  }

  /**
   * Invocations per UTC day and version since `since`, derived from the invocation records (the
   * registry keeps every invocation; no per-day table is needed): docs/console.md#health-timeline.
   */
  dailyOutcomes(name: string, since: Date): DailyOutcome[] {
    return withSqlite("registry", "read daily outcomes", () =>
      this.db
        // Integer division in SQL: a bound JS number would arrive as a REAL and split no days.
        .prepare<[string, number], { day: number; version: number; invocations: number; successes: number }>(
          `SELECT invoked_at / ${DAY_MS} AS day, version, COUNT(*) AS invocations, SUM(success) AS successes
           FROM invocations WHERE skill_name = ? AND invoked_at >= ?
           GROUP BY day, version ORDER BY day, version`,
        )
        .all(name, since.getTime())
        .map((row) => ({
          day: new Date(row.day * DAY_MS),
          version: row.version,
          invocations: row.invocations,
          successes: row.successes,
        })),
    );
  }

  /** Durations of the most recent `perVersion` invocations of each version of a skill. */
  durationsByVersion(name: string, perVersion: number): Map<number, number[]> {
    return withSqlite("registry", "read durations by version", () => {
      const rows = this.db
        .prepare<[string, number], { version: number; duration_ms: number }>(
          `SELECT version, duration_ms FROM (
             SELECT version, duration_ms, ROW_NUMBER() OVER (PARTITION BY version ORDER BY id DESC) AS n
             FROM invocations WHERE skill_name = ?)
           WHERE n <= ? ORDER BY version`,
        )
        .all(name, perVersion);
      const byVersion = new Map<number, number[]>();
      for (const row of rows) {
        const list = byVersion.get(row.version) ?? [];
        list.push(row.duration_ms);
        byVersion.set(row.version, list);
      }
      return byVersion;
    });
  }

  /** Invocation rows of a skill, newest first. */
  invocations(name: string, limit = 100): InvocationOutcome[] {
    return withSqlite("registry", "read invocations", () =>
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

  /** Inserts a whole skill with its history (migration, rebuild); refuses an existing name. */
  importSkill(skill: ImportedSkill): SkillRecord {
    return withSqlite("registry", "import a skill", () =>
      this.db.transaction(() => {
        for (const version of skill.versions) this.insertVersion(version);
        const active = skill.versions.find((v) => v.version === skill.activeVersion);
        if (!active) throw new InternalError(`import of "${skill.name}": active version ${skill.activeVersion} missing`);
        const created = skill.createdAt.getTime();
        const now = Date.now();
        this.db
          .prepare(
            `INSERT INTO skills (name, description, parameters_schema, test_payload, status, status_reason, version,
                                 content_hash, usage_count, failure_count, protected, auto_created,
                                 created_at, updated_at, status_changed_at, last_invoked_at, owner, visibility)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(
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
            skill.access.visibility,
          );
        return this.get(skill.name) as SkillRecord;
      })(),
    );
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  private insertVersion(next: VersionRecord): void {
    this.db
      .prepare(
        `INSERT INTO skill_versions (name, version, description, parameters_schema, test_payload, content_hash, origin, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
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
      );
  }

  /** Applies the health rules to the stored counters and window; call inside a transaction. */
  private reevaluate(name: string, at: Date): SkillRecord {
    const current = this.get(name);
    if (!current) throw new SkillNotFoundError(name);
    const verdict = evaluateHealth(
      {
        status: current.status,
        protected: current.protected,
        failureCount: current.failureCount,
        window: this.window(name, current.version),
      },
      this.policy,
    );
    const changed = verdict.status !== current.status;
    if (!changed && verdict.reason === current.statusReason && verdict.warning === current.healthWarning) return current;
    this.db
      .prepare(
        `UPDATE skills SET status = ?, status_reason = ?, health_warning = ?,
                           status_changed_at = CASE WHEN ? THEN ? ELSE status_changed_at END
         WHERE name = ?`,
      )
      .run(verdict.status, verdict.reason, verdict.warning, changed ? 1 : 0, at.getTime(), name);
    return this.get(name) as SkillRecord;
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
    testPayload: row.test_payload,
    status: SKILL_STATUSES.find((s) => s === row.status) ?? "active",
    statusReason: row.status_reason,
    healthWarning: row.health_warning,
    version: row.version,
    latestVersion: row.latest_version ?? row.version,
    contentHash: row.content_hash,
    usageCount: row.usage_count,
    failureCount: row.failure_count,
    protected: row.protected === 1,
    autoCreated: row.auto_created === 1,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    statusChangedAt: new Date(row.status_changed_at),
    lastInvokedAt: row.last_invoked_at === null ? undefined : new Date(row.last_invoked_at),
    owner: row.owner,
    visibility: row.visibility === "public" ? "public" : "private",
  };
}

function toVersionRecord(row: VersionRow): VersionRecord {
  return {
    name: row.name,
    version: row.version,
    description: row.description,
    parametersSchema: row.parameters_schema,
    testPayload: row.test_payload,
    contentHash: row.content_hash,
    origin: VERSION_ORIGINS.find((o) => o === row.origin) ?? "register",
    createdAt: new Date(row.created_at),
  };
}
