import { randomBytes } from "node:crypto";
import type Database from "better-sqlite3";
import { openRegistryDatabase, withSqlite } from "../../sqlite/index.js";
import { InvocationLog } from "./invocation-log.js";
import { type MirrorChange, MirrorChanges } from "./mirror-changes.js";
import type { OutcomeRecord, OutcomeSource, SourceWindow } from "./outcome-signals.js";
import type { OutcomeReporter } from "./outcome-trust.js";
import type {
  DailyOutcome,
  GranteeKind,
  ImportedSkill,
  InvocationOutcome,
  LibraryKind,
  LibraryOptions,
  ListOptions,
  SkillAccess,
  SkillFileState,
  SkillGrant,
  SkillRecord,
  UsageFigures,
  VersionRecord,
} from "./records.js";
import { type LastOutcome, ReportedOutcomes } from "./reported-outcomes.js";
import { SharingRows } from "./sharing-rows.js";
import type { HealthPolicy, SkillStatus, WindowStats } from "./skill-health.js";
import { importSkill } from "./skill-import.js";
import { SkillRows } from "./skill-rows.js";
import { StatusRows } from "./skill-status.js";
import { TelemetrySync } from "./telemetry-sync.js";
import { VersionHistory } from "./version-history.js";

/** The registry's file name under `$SKILL_ENGINE_HOME`. */
export const REGISTRY_FILE = "registry.db";

/**
 * The registry in SQLite (`registry.db`, WAL): skills, their version history and every
 * invocation's outcome. It is the source of truth; the canonical directory follows it.
 *
 * One front over one connection; each concern is a module of this folder: skill-rows.ts (the
 * skills table, listings), skill-status.ts (status and health judgement), version-history.ts,
 * invocation-log.ts (invocations, counters, usage), telemetry-sync.ts (when telemetry reaches the
 * disk), reported-outcomes.ts, sharing-rows.ts (owner, visibility, grants), skill-import.ts.
 */
export class SkillRegistry {
  private readonly telemetry: TelemetrySync;
  private readonly rows: SkillRows;
  private readonly status: StatusRows;
  private readonly history: VersionHistory;
  private readonly log: InvocationLog;
  private readonly reported: ReportedOutcomes;
  private readonly sharing: SharingRows;
  private readonly mirror: MirrorChanges;
  /** Writes that can change a catalog entry so far, in this process ({@link catalogGeneration}). */
  private catalogWrites = 0;
  /** Told apart from another process's counts: a restart never repeats a value. */
  private readonly processMark = randomBytes(6).toString("base64url");

  private constructor(
    private readonly db: Database.Database,
    policy: HealthPolicy,
    file: string,
    telemetrySyncMs: number,
  ) {
    this.telemetry = new TelemetrySync(db, file, telemetrySyncMs);
    this.rows = new SkillRows(db);
    this.status = new StatusRows(db, policy, this.rows);
    this.history = new VersionHistory(db, this.rows, this.status);
    this.log = new InvocationLog(db, this.rows, this.status, this.telemetry);
    this.reported = new ReportedOutcomes(db, policy, this.rows, this.status, this.log);
    this.sharing = new SharingRows(db, this.rows);
    this.mirror = new MirrorChanges(db);
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

  /** Flushes telemetry committed without its own fsync to disk. */
  flushTelemetry(): Promise<void> {
    return this.telemetry.flush();
  }

  // Skills and listings.

  get(name: string): SkillRecord | undefined {
    return this.rows.get(name);
  }

  /** Skills ordered by name; retired and deleted ones only when asked for; a keyset page with `after` and `limit`. */
  list(options: ListOptions = {}): SkillRecord[] {
    return this.rows.list(options);
  }

  /** A page of the console's library, each skill with its kind, in one query (docs/console.md#library). */
  library(options: LibraryOptions): Array<{ skill: SkillRecord; kind: LibraryKind }> {
    return this.rows.library(options);
  }

  /**
   * Name and description of each skill {@link list} returns, in its order, and nothing else: what
   * the near-duplicate screen compares on every registration. A tenth of the full listing's cost
   * (no versions or grants joined, no records built): 10,000 skills in ≈ 5–6 ms instead of ≈ 50–100 ms.
   */
  describedSkills(options: ListOptions = {}): Array<{ name: string; description: string }> {
    return this.rows.describedSkills(options);
  }

  /**
   * {@link describedSkills} restricted to `names` (the near-duplicate screen's candidates, found
   * through routing's vector index), in one query whatever the library's size; in no order.
   */
  describedSkillsNamed(names: readonly string[], options: ListOptions = {}): Array<{ name: string; description: string }> {
    return this.rows.describedSkillsNamed(names, options);
  }

  isEmpty(): boolean {
    return this.rows.isEmpty();
  }

  /** How many skills, in every status, without reading them. */
  count(): number {
    return this.rows.count();
  }

  /** Every skill's name, status, active version, latest version and content hash: what reconciliation checks the files against. */
  fileStates(): SkillFileState[] {
    return this.rows.fileStates();
  }

  /**
   * Changes with every write that can change an entry of a catalog (GetCatalog's etag,
   * docs/api.md#catalog-etag): a new version, an activation, an import, a status, a pin, owner,
   * visibility, grants and the on/off switch. Invocations and reported outcomes leave it alone:
   * they change counters and health (active, degraded, deprecated), which no catalog entry shows.
   * Equal values mean no such write happened between the two reads.
   */
  catalogGeneration(): string {
    return `${this.processMark}.${this.catalogWrites}`;
  }

  /** Marks a skill as created by the service (pattern promotion: docs/learning.md#promotion). */
  markAutoCreated(name: string, at: Date): SkillRecord {
    return this.catalogWrite(this.rows.markAutoCreated(name, at));
  }

  // The mirror's outbox (docs/operations.md#the-registry-mirror).

  /** Up to `limit` skills after `after` (by name) whose mirror file is behind the registry, with the mark of their last change. */
  pendingMirrorChanges(limit: number, after?: string): MirrorChange[] {
    return this.mirror.pending(limit, after);
  }

  /** Settles the marks of the files just written; a mark replaced by a later change stays. */
  settleMirrorChanges(written: readonly MirrorChange[]): void {
    this.mirror.settle(written);
  }

  /** Marks every skill, so the mirror's next write rewrites every file. */
  markWholeMirror(): void {
    this.mirror.markAll();
  }

  // Versions.

  /** The number the next version of `name` will get. */
  nextVersion(name: string): number {
    return this.history.nextVersion(name);
  }

  /** Versions of `name`, oldest first; with `page`, those after `page.after`, at most `page.limit`. */
  versions(name: string, page?: { readonly after?: number; readonly limit?: number }): VersionRecord[] {
    return this.history.versions(name, page);
  }

  version(name: string, version: number): VersionRecord | undefined {
    return this.history.version(name, version);
  }

  /** Environment id → the number of versions that refer to it (docs/packages.md#removal). */
  environmentUses(): Map<string, number> {
    return this.history.environmentUses();
  }

  /**
   * Records a new version and makes it the active one, with a fresh health record (a new
   * version gets a new chance). `access` is the skill's owner and visibility from now on. Fails
   * if another writer already took that number.
   */
  commitVersion(next: VersionRecord, access: SkillAccess): SkillRecord {
    return this.catalogWrite(this.history.commit(next, access));
  }

  /** Makes an earlier (or later) committed version the active one again (rollback). */
  activateVersion(name: string, version: number, at: Date): SkillRecord {
    return this.catalogWrite(this.history.activate(name, version, at));
  }

  /** Inserts a whole skill with its history (migration, rebuild); refuses an existing name. */
  importSkill(skill: ImportedSkill): SkillRecord {
    return this.catalogWrite(importSkill({ db: this.db, rows: this.rows, history: this.history, sharing: this.sharing }, skill));
  }

  // Status and health.

  /** Sets a status that only an RPC decides (retired, deleted, or live again after a restore). */
  setStatus(name: string, next: SkillStatus, reason: string, at: Date): SkillRecord {
    return this.catalogWrite(this.status.setStatus(name, next, reason, at));
  }

  /** Brings a retired or deleted skill back with a fresh failure count, then judges its health. */
  restore(name: string, reason: string, at: Date): SkillRecord {
    return this.catalogWrite(this.status.restore(name, reason, at));
  }

  /** Pins or unpins a skill; its health is re-judged at once (unpinning may deprecate it). */
  setProtected(name: string, pinned: boolean, at: Date): SkillRecord {
    return this.catalogWrite(this.status.setProtected(name, pinned, at));
  }

  /**
   * Outcomes of the most recent invocations of `version` (the rolling window), an explicit outcome
   * replacing the exit code's verdict, with the implicit signals (docs/learning.md#outcomes).
   */
  window(name: string, version: number): WindowStats & { readonly bySource: SourceWindow[] } {
    return this.status.window(name, version);
  }

  // Invocations and usage.

  /** Records an invocation, updates the counters (docs/skill-lifecycle.md#counters) and re-judges the skill's health. */
  recordInvocation(outcome: InvocationOutcome): SkillRecord | undefined {
    return this.log.record(outcome).skill;
  }

  /** recordInvocation, also returning the invocation's id (RecordSkillOutcome names it). */
  recordInvocationWithId(outcome: InvocationOutcome): { skill: SkillRecord | undefined; invocationId: number } {
    return this.log.record(outcome);
  }

  /** One invocation row, or undefined. */
  invocation(id: number): (InvocationOutcome & { readonly id: number }) | undefined {
    return this.log.invocation(id);
  }

  /** The newest failed invocation of a skill (with its stderr's end); with `caller`, only that agent's. */
  lastFailure(name: string, caller?: string): (InvocationOutcome & { readonly id: number }) | undefined {
    return this.log.lastFailure(name, caller);
  }

  /** Invocation rows of a skill, newest first; with `caller`, only that agent's. */
  invocations(name: string, limit = 100, caller?: string): (InvocationOutcome & { readonly id: number })[] {
    return this.log.invocations(name, limit, caller);
  }

  usage(name: string, version: number, now: Date): UsageFigures {
    return this.log.usage(name, version, now);
  }

  /**
   * The outcomes of the most recent `limit` invocations of each (name, version), oldest first: the
   * rolling window of docs/skill-lifecycle.md#rolling-window when `limit` is the window size. One
   * indexed query per key (invocations_by_skill), so a page of skills costs a page of lookups.
   */
  recentOutcomes(keys: readonly { name: string; version: number }[], limit: number): Map<string, boolean[]> {
    return this.log.recentOutcomes(keys, limit);
  }

  /**
   * Invocations per UTC day and version since `since`, derived from the invocation records (the
   * registry keeps every invocation; no per-day table is needed): docs/console.md#health-timeline.
   */
  dailyOutcomes(name: string, since: Date): DailyOutcome[] {
    return this.log.dailyOutcomes(name, since);
  }

  /** Durations of the most recent `perVersion` invocations of each version of a skill. */
  durationsByVersion(name: string, perVersion: number): Map<number, number[]> {
    return this.log.durationsByVersion(name, perVersion);
  }

  // Reported outcomes.

  /**
   * An agent's verdict on one invocation (docs/learning.md#outcomes): replaces an earlier explicit
   * verdict on it; the skill's health is re-judged at once. Whether it counts toward the shared
   * window depends on who reports it (docs/learning.md#whose-reports-count).
   */
  recordExplicitOutcome(invocationId: number, success: boolean, note: string, reporter: OutcomeReporter, at: Date): SkillRecord {
    return this.reported.recordExplicit(invocationId, success, note, reporter, at);
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
    return this.reported.recordSignal({ name, source, success, weight, note, reporter, at });
  }

  /**
   * `reporter`'s own reports on the active version of each skill it reported on (its newest window's
   * worth a skill): what its own routes follow (docs/learning.md#your-own-routes).
   */
  ownReports(reporter: string): Map<string, WindowStats> {
    return this.reported.ownReports(reporter);
  }

  /** The skill's last judged outcome (docs/skill-lifecycle.md#stats); undefined before any. */
  lastOutcome(name: string): LastOutcome | undefined {
    return this.reported.lastOutcome(name);
  }

  /** Every explicit and implicit outcome (the learning mirror). */
  outcomes(): OutcomeRecord[] {
    return this.reported.all();
  }

  /** Restores mirrored outcomes when the table is empty (a rebuilt registry); returns how many. */
  restoreOutcomes(records: readonly OutcomeRecord[]): number {
    return this.reported.restore(records);
  }

  // Owner, visibility and grants.

  /** Changes who owns a skill or who may see it. */
  setAccess(name: string, access: SkillAccess, at: Date): SkillRecord {
    return this.catalogWrite(this.sharing.setAccess(name, access, at));
  }

  /** Marks a skill as a system skill or not (docs/security.md#system-skills). */
  setSystem(name: string, system: boolean, at: Date): SkillRecord {
    return this.catalogWrite(this.sharing.setSystem(name, system, at));
  }

  /** Switches a skill on or off; `by` is recorded while it is off. */
  setEnabled(name: string, enabled: boolean, by: string, at: Date): SkillRecord {
    return this.catalogWrite(this.sharing.setEnabled(name, enabled, by, at));
  }

  /** Adds or replaces (same grantee) a grant; the first grant makes a private skill internal. */
  grant(grant: SkillGrant): SkillRecord {
    return this.catalogWrite(this.sharing.grant(grant));
  }

  /** Removes a grant; returns the skill and whether there was one. The last one gone, an internal skill is private again. */
  revoke(name: string, kind: GranteeKind, grantee: string, at: Date): { skill: SkillRecord; revoked: boolean } {
    return this.catalogWrite(this.sharing.revoke(name, kind, grantee, at));
  }

  /** Removes every grant of a skill; returns the skill and the grants it had. */
  revokeAll(name: string, at: Date): { skill: SkillRecord; revoked: readonly SkillGrant[] } {
    return this.catalogWrite(this.sharing.revokeAll(name, at));
  }

  /** Counts a write for {@link catalogGeneration} once it is committed (a failed one threw before). */
  private catalogWrite<T>(result: T): T {
    this.catalogWrites += 1;
    return result;
  }

  /** Flushes what telemetry is left to disk, then closes the connection. */
  close(): void {
    this.telemetry.close();
    if (this.db.open) this.db.close();
  }
}
