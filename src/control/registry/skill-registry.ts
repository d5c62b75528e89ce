import { closeSync, fdatasyncSync, openSync } from "node:fs";
import { open as openFile } from "node:fs/promises";
import type Database from "better-sqlite3";
import { InternalError, SkillNotFoundError, SkillVersionNotFoundError } from "../../errors/index.js";
import { openRegistryDatabase, withSqlite } from "../../sqlite/index.js";
import type {
  DailyOutcome,
  GranteeKind,
  ImportedSkill,
  InvocationOutcome,
  ListOptions,
  SkillAccess,
  SkillGrant,
  SkillRecord,
  SkillVisibility,
  UsageFigures,
  VersionRecord,
} from "./records.js";
import { VERSION_ORIGINS } from "./records.js";
import {
  type OutcomeRecord,
  type OutcomeSource,
  readOutcomes,
  readOwnReports,
  readWindow,
  restoreOutcomes,
  type SourceWindow,
} from "./outcome-signals.js";
import type { OutcomeReporter } from "./outcome-trust.js";
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
  is_system: number;
  enabled: number;
  disabled_by: string;
  grants_json: string;
}

interface GrantRow {
  name: string;
  grantee_kind: string;
  grantee: string;
  version: number | null;
  granted_by: string;
  granted_at: number;
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

/** The registry's file name under `$SKILL_ENGINE_HOME`. */
export const REGISTRY_FILE = "registry.db";

const SELECT_SKILL = `SELECT s.*, (SELECT MAX(v.version) FROM skill_versions v WHERE v.name = s.name) AS latest_version,
                             (SELECT json_group_array(json_object('name', g.name, 'grantee_kind', g.grantee_kind, 'grantee', g.grantee,
                                                                  'version', g.version, 'granted_by', g.granted_by, 'granted_at', g.granted_at))
                                FROM (SELECT * FROM skill_grants WHERE name = s.name ORDER BY granted_at, grantee_kind, grantee) g) AS grants_json
                      FROM skills s`;

const RECENT_DURATIONS = 100;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The registry in SQLite (`registry.db`, WAL): skills, their version history and every
 * invocation's outcome. It is the source of truth; the canonical directory follows it.
 */
export class SkillRegistry {
  /** Telemetry commits written to the WAL but not yet flushed to disk. */
  private telemetryUnsynced = false;
  private telemetryTimer: NodeJS.Timeout | undefined;
  private telemetryFlushing: Promise<void> = Promise.resolve();

  private constructor(
    private readonly db: Database.Database,
    private readonly policy: HealthPolicy,
    private readonly file: string,
    private readonly telemetrySyncMs: number,
  ) {
    if (telemetrySyncMs > 0) {
      this.telemetryTimer = setInterval(() => void this.flushTelemetry(), telemetrySyncMs);
      this.telemetryTimer.unref();
    }
  }

  /**
   * `telemetrySyncMs` > 0: an invocation's telemetry commit does not wait for its own fsync; the
   * WAL is flushed to disk at most that long after it (docs/performance.md#telemetry-durability).
   * 0: every telemetry commit is fsynced before it returns, like every other write.
   */
  static open(file: string, policy: HealthPolicy, options: { telemetrySyncMs?: number; sqliteCacheKib?: number } = {}): SkillRegistry {
    return withSqlite("registry", `open the registry at ${file}`, () => {
      const db = openRegistryDatabase(file, { durable: true, cacheKib: options.sqliteCacheKib });
      return new SkillRegistry(db, policy, file, options.telemetrySyncMs ?? 0);
    });
  }

  /**
   * Flushes telemetry committed without its own fsync (the WAL file, where SQLite put it) to disk.
   * Every other commit is FULL: its fsync of the WAL covers the telemetry written before it too.
   */
  async flushTelemetry(): Promise<void> {
    const next = this.telemetryFlushing.then(async () => {
      if (!this.telemetryUnsynced) return;
      this.telemetryUnsynced = false;
      const handle = await openFile(`${this.file}-wal`, "r").catch(() => undefined);
      if (!handle) return;
      try {
        await handle.datasync();
      } finally {
        await handle.close();
      }
    });
    this.telemetryFlushing = next.catch(() => {
      // Not on disk yet: the next tick tries again.
      this.telemetryUnsynced = true;
    });
    await next;
  }

  get(name: string): SkillRecord | undefined {
    const row = withSqlite("registry", "read a skill", () =>
      this.db.prepare<[string], SkillRow>(`${SELECT_SKILL} WHERE s.name = ?`).get(name),
    );
    return row ? toRecord(row) : undefined;
  }

  /** Skills ordered by name; retired and deleted ones only when asked for. */
  list(options: ListOptions = {}): SkillRecord[] {
    const { where, params } = listFilter(options);
    return withSqlite("registry", "list skills", () =>
      this.db.prepare<[Record<string, string>], SkillRow>(`${SELECT_SKILL} ${where} ORDER BY s.name`).all(params).map(toRecord),
    );
  }

  /**
   * Name and description of each skill {@link list} returns, in its order, and nothing else: what
   * the near-duplicate screen compares on every registration. A tenth of the full listing's cost
   * (no versions or grants joined, no records built): 10,000 skills in ≈ 5–6 ms instead of ≈ 50–100 ms.
   */
  describedSkills(options: ListOptions = {}): Array<{ name: string; description: string }> {
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
            visibility: storedVisibility(access.visibility),
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
    return this.recordInvocationWithId(outcome).skill;
  }

  /** recordInvocation, also returning the invocation's id (RecordSkillOutcome names it). */
  recordInvocationWithId(outcome: InvocationOutcome): { skill: SkillRecord | undefined; invocationId: number } {
    const at = outcome.at.getTime();
    const relaxed = this.telemetrySyncMs > 0;
    const before = relaxed ? this.get(outcome.name)?.status : undefined;
    // The transaction's commit is not fsynced when relaxed: it is in the WAL (a process crash
    // loses nothing), and on disk within telemetrySyncMs (flushTelemetry).
    if (relaxed) this.db.pragma("synchronous = NORMAL");
    try {
      const recorded = this.recordInvocationNow(outcome, at);
      if (relaxed) {
        this.telemetryUnsynced = true;
        // A status change (degraded, retired) is a decision others act on: on disk at once.
        if (recorded.skill && recorded.skill.status !== before) void this.flushTelemetry().catch(() => undefined);
      }
      return recorded;
    } finally {
      if (relaxed) this.db.pragma("synchronous = FULL");
    }
  }

  private recordInvocationNow(outcome: InvocationOutcome, at: number): { skill: SkillRecord | undefined; invocationId: number } {
    return withSqlite("registry", "record an invocation", () =>
      this.db.transaction(() => {
        const inserted = this.db
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
        return { skill: this.reevaluate(outcome.name, outcome.at), invocationId: Number(inserted.lastInsertRowid) };
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
          .run(access.owner, storedVisibility(access.visibility), at.getTime(), name);
        const updated = this.get(name);
        if (!updated) throw new SkillNotFoundError(name);
        return updated;
      })(),
    );
  }

  /**
   * Outcomes of the most recent invocations of `version` (the rolling window), an explicit outcome
   * replacing the exit code's verdict, with the implicit signals (docs/learning.md#outcomes).
   */
  window(name: string, version: number): WindowStats & { readonly bySource: SourceWindow[] } {
    return withSqlite("registry", "read the rolling window", () => readWindow(this.db, name, version, this.policy));
  }

  /**
   * `reporter`'s own reports on the active version of each skill it reported on (its newest window's
   * worth a skill): what its own routes follow (docs/learning.md#your-own-routes).
   */
  ownReports(reporter: string): Map<string, WindowStats> {
    return withSqlite("registry", "read an agent's own reports", () => readOwnReports(this.db, reporter, this.policy.windowSize));
  }

  /** One invocation row, or undefined. */
  invocation(id: number): (InvocationOutcome & { readonly id: number }) | undefined {
    return this.invocationRows("WHERE id = ?", [id])[0];
  }

  /**
   * An agent's verdict on one invocation (docs/learning.md#outcomes): replaces an earlier explicit
   * verdict on it; the skill's health is re-judged at once. Whether it counts toward the shared
   * window depends on who reports it (docs/learning.md#whose-reports-count).
   */
  recordExplicitOutcome(invocationId: number, success: boolean, note: string, reporter: OutcomeReporter, at: Date): SkillRecord {
    return withSqlite("registry", "record an outcome", () =>
      this.db.transaction(() => {
        const invocation = this.invocation(invocationId);
        if (!invocation) throw new InternalError(`invocation ${invocationId} vanished`);
        const trusted = this.trusts(invocation.name, reporter);
        this.db
          .prepare(
            `INSERT INTO invocation_outcomes (skill_name, version, invocation_id, source, success, weight, note, caller, at, trusted)
             VALUES (?, ?, ?, 'explicit', ?, 1.0, ?, ?, ?, ?)
             ON CONFLICT (invocation_id) WHERE source = 'explicit' DO UPDATE SET
               success = excluded.success, note = excluded.note, caller = excluded.caller, at = excluded.at, trusted = excluded.trusted`,
          )
          .run(invocation.name, invocation.version, invocationId, success ? 1 : 0, note, reporter.agentId, at.getTime(), trusted ? 1 : 0);
        return this.reevaluate(invocation.name, at);
      })(),
    );
  }

  /** The skill's owner and admins are trusted reporters (docs/learning.md#whose-reports-count); call inside a transaction. */
  private trusts(name: string, reporter: OutcomeReporter): boolean {
    if (reporter.admin) return true;
    const skill = this.get(name);
    if (!skill) throw new SkillNotFoundError(name);
    return skill.owner === reporter.agentId;
  }

  /** A sample that is no invocation's (an implicit signal from a recorded session), with its weight; trusted as an explicit one is. */
  recordSignal(
    name: string,
    source: Exclude<OutcomeSource, "exit_code" | "explicit">,
    success: boolean,
    weight: number,
    note: string,
    reporter: OutcomeReporter,
    at: Date,
  ): SkillRecord {
    return withSqlite("registry", "record an outcome signal", () =>
      this.db.transaction(() => {
        const current = this.get(name);
        if (!current) throw new SkillNotFoundError(name);
        const trusted = reporter.admin || current.owner === reporter.agentId;
        this.db
          .prepare(
            `INSERT INTO invocation_outcomes (skill_name, version, invocation_id, source, success, weight, note, caller, at, trusted)
             VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(name, current.version, source, success ? 1 : 0, weight, note, reporter.agentId, at.getTime(), trusted ? 1 : 0);
        return this.reevaluate(name, at);
      })(),
    );
  }

  /** Every explicit and implicit outcome (the learning mirror). */
  outcomes(): OutcomeRecord[] {
    return withSqlite("registry", "read outcomes", () => readOutcomes(this.db));
  }

  /** Restores mirrored outcomes when the table is empty (a rebuilt registry); returns how many. */
  restoreOutcomes(records: readonly OutcomeRecord[]): number {
    return withSqlite("registry", "restore outcomes", () =>
      this.db.transaction(() => {
        if (this.db.prepare("SELECT 1 FROM invocation_outcomes LIMIT 1").get() !== undefined) return 0;
        restoreOutcomes(
          this.db,
          records.filter((r) => this.get(r.skillName) !== undefined),
        );
        for (const name of new Set(records.map((r) => r.skillName))) if (this.get(name)) this.reevaluate(name, new Date());
        return records.length;
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
    return this.invocationRows("WHERE skill_name = ? ORDER BY id DESC LIMIT ?", [name, limit]);
  }

  private invocationRows(where: string, params: (string | number)[]): (InvocationOutcome & { readonly id: number })[] {
    return withSqlite("registry", "read invocations", () =>
      this.db
        .prepare<(string | number)[], Record<string, number | string>>(`SELECT * FROM invocations ${where}`)
        .all(...params)
        .map((row) => ({
          id: Number(row.id),
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
                                 created_at, updated_at, status_changed_at, last_invoked_at, owner, visibility,
                                 is_system, enabled, disabled_by)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
            storedVisibility(skill.access.visibility),
            skill.sharing?.system ? 1 : 0,
            skill.sharing?.enabled === false ? 0 : 1,
            skill.sharing?.enabled === false ? skill.sharing.disabledBy : "",
          );
        for (const grant of skill.sharing?.grants ?? []) this.putGrant(grant);
        return this.get(skill.name) as SkillRecord;
      })(),
    );
  }

  /** Marks a skill as a system skill or not (docs/security.md#system-skills). */
  setSystem(name: string, system: boolean, at: Date): SkillRecord {
    return this.updateSkill("mark a system skill", name, "is_system = ?, updated_at = ?", [system ? 1 : 0, at.getTime()]);
  }

  /** Switches a skill on or off; `by` is recorded while it is off. */
  setEnabled(name: string, enabled: boolean, by: string, at: Date): SkillRecord {
    return this.updateSkill("switch a skill on or off", name, "enabled = ?, disabled_by = ?, updated_at = ?", [
      enabled ? 1 : 0,
      enabled ? "" : by,
      at.getTime(),
    ]);
  }

  /** Adds or replaces (same grantee) a grant; the first grant makes a private skill internal. */
  grant(grant: SkillGrant): SkillRecord {
    return withSqlite("registry", "grant a skill", () =>
      this.db.transaction(() => {
        this.putGrant(grant);
        this.db.prepare("UPDATE skills SET updated_at = ? WHERE name = ?").run(grant.grantedAt.getTime(), grant.name);
        return this.get(grant.name) as SkillRecord;
      })(),
    );
  }

  /** Removes a grant; returns the skill and whether there was one. The last one gone, an internal skill is private again. */
  revoke(name: string, kind: GranteeKind, grantee: string, at: Date): { skill: SkillRecord; revoked: boolean } {
    return withSqlite("registry", "revoke a grant", () =>
      this.db.transaction(() => {
        const revoked =
          this.db.prepare("DELETE FROM skill_grants WHERE name = ? AND grantee_kind = ? AND grantee = ?").run(name, kind, grantee).changes >
          0;
        if (revoked) this.db.prepare("UPDATE skills SET updated_at = ? WHERE name = ?").run(at.getTime(), name);
        const skill = this.get(name);
        if (!skill) throw new SkillNotFoundError(name);
        return { skill, revoked };
      })(),
    );
  }

  close(): void {
    if (this.telemetryTimer) clearInterval(this.telemetryTimer);
    if (this.telemetryUnsynced) {
      this.telemetryUnsynced = false;
      try {
        const fd = openSync(`${this.file}-wal`, "r");
        try {
          fdatasyncSync(fd);
        } finally {
          closeSync(fd);
        }
      } catch {
        // No WAL left (already checkpointed and removed): nothing to flush.
      }
    }
    if (this.db.open) this.db.close();
  }

  private putGrant(grant: SkillGrant): void {
    this.db
      .prepare(
        `INSERT INTO skill_grants (name, grantee_kind, grantee, version, granted_by, granted_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (name, grantee_kind, grantee) DO UPDATE SET
           version = excluded.version, granted_by = excluded.granted_by, granted_at = excluded.granted_at`,
      )
      .run(grant.name, grant.granteeKind, grant.grantee, grant.version ?? null, grant.grantedBy, grant.grantedAt.getTime());
  }

  private updateSkill(action: string, name: string, assignments: string, values: readonly (string | number)[]): SkillRecord {
    return withSqlite("registry", action, () =>
      this.db.transaction(() => {
        this.db.prepare(`UPDATE skills SET ${assignments} WHERE name = ?`).run(...values, name);
        const updated = this.get(name);
        if (!updated) throw new SkillNotFoundError(name);
        return updated;
      })(),
    );
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
    ...sharingOf(row),
  };
}

/** The visibility column holds the owner's choice (private or public); internal is derived from the grants. */
function storedVisibility(visibility: SkillVisibility): "private" | "public" {
  return visibility === "public" ? "public" : "private";
}

function sharingOf(row: SkillRow): Pick<SkillRecord, "visibility" | "system" | "enabled" | "disabledBy" | "grants"> {
  const grants = (JSON.parse(row.grants_json ?? "[]") as GrantRow[]).map((g): SkillGrant => ({
    name: g.name,
    granteeKind: g.grantee_kind === "user" ? "user" : "agent",
    grantee: g.grantee,
    version: g.version ?? undefined,
    grantedBy: g.granted_by,
    grantedAt: new Date(g.granted_at),
  }));
  return {
    visibility: row.visibility === "public" ? "public" : grants.length > 0 ? "internal" : "private",
    system: row.is_system === 1,
    enabled: row.enabled !== 0,
    disabledBy: row.disabled_by ?? "",
    grants,
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
