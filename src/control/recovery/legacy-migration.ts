import { lstat, unlink } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "pino";
import { InvalidArgumentError } from "../../errors/index.js";
import { LOCAL_AGENT } from "../../identity/index.js";
import type { CodeIntake } from "../intake/index.js";
import type { SkillRegistry } from "../registry/index.js";
import { type CanonicalStore, contentHash, locationOf, pathExists, STORE_LOCATIONS, writeFileAtomic } from "../store/index.js";
import { LEGACY_INDEX_FILE, LEGACY_SKILLS_DIR, type LegacyContents, readLegacyDirectory, type SkippedFile } from "./legacy-files.js";
import { type MigrationPlan, planSkill } from "./legacy-plan.js";

export { LEGACY_SKILLS_DIR } from "./legacy-files.js";

/**
 * Written into the canonical directory before the first skill is copied and removed after the
 * last: a migration that a crash interrupted resumes at the next start instead of stopping at
 * "the store is populated" with half the skills.
 */
export const MIGRATION_MARKER_FILE = ".legacy-migration-in-progress";

export interface LegacyMigrationOptions {
  /** `$SKILL_ENGINE_SANDBOX_DIR`; legacy skills sit in its `acquired_skills/`. */
  readonly sandboxDir: string;
  readonly registry: SkillRegistry;
  readonly store: CanonicalStore;
  readonly logger: Logger;
  /**
   * The intake gate (normalization + content guard) every path that writes skill code goes
   * through: a legacy file it rejects is skipped with the diagnosis; one it repairs is stored
   * repaired. Omitted only by tests of the file handling itself.
   */
  readonly intake?: CodeIntake;
  /** @default new Date() */
  readonly now?: Date;
}

export interface LegacyMigrationReport {
  /** Skills copied into the canonical store and registered, by name. */
  readonly migrated: string[];
  /** Legacy files left out, with why (`file` is relative to the legacy directory). */
  readonly skipped: Array<{ file: string; reason: string }>;
  /** True when the canonical store already held skills, so nothing was done. */
  readonly alreadyPopulated: boolean;
  readonly legacyDirFound: boolean;
  /** Legacy metadata that was unusable and replaced by a default; the skill was still migrated. */
  readonly warnings: string[];
}

/**
 * Migration from legacy sandbox storage (docs/operations.md#legacy-migration): when the canonical
 * store is empty, copies the skills an earlier install kept under `$SKILL_ENGINE_SANDBOX_DIR/acquired_skills/` into it
 * and registers each as version 1 (origin `migrate`, auto-created). Idempotent: once the
 * canonical store holds anything (a registry row or a `.py` in any location) it does nothing.
 * Legacy files are only read, never changed or removed.
 *
 * The legacy directory was writable by sandboxed code, so it is read as hostile (legacy-files.ts):
 * symlinks are never followed, only regular files of at most `LIMITS.codeBytes` bytes of valid
 * UTF-8 with a valid skill name are taken, and a file whose content no longer matches the hash
 * the legacy `skills_registry.json` recorded for it is skipped (legacy-plan.ts).
 *
 * The code is not test-run (the legacy system accepted it, and like every skill it only ever runs
 * inside the sandbox), but it does pass the intake gate when one is given (the service always
 * gives it): normalization and the content guard, whose rejections are reported as skipped files. Legacy statuses are kept, so a
 * skill the legacy system retired lands in `retired/` (restorable, not routed) rather than
 * being dropped or revived.
 */
export async function migrateLegacySkills(options: LegacyMigrationOptions): Promise<LegacyMigrationReport> {
  const { registry, store, logger } = options;
  const now = options.now ?? new Date();
  const legacyDir = path.join(path.resolve(options.sandboxDir), LEGACY_SKILLS_DIR);
  const skipped: SkippedFile[] = [];
  const warnings: string[] = [];
  const report = (extra: { migrated?: string[]; alreadyPopulated?: boolean; legacyDirFound: boolean }): LegacyMigrationReport => ({
    migrated: extra.migrated ?? [],
    skipped,
    alreadyPopulated: extra.alreadyPopulated ?? false,
    legacyDirFound: extra.legacyDirFound,
    warnings,
  });

  const legacyStat = await lstat(legacyDir).catch(() => undefined);
  if (!legacyStat) return report({ legacyDirFound: false });

  await store.init();
  const markerPath = path.join(store.directory, MIGRATION_MARKER_FILE);
  const resuming = await pathExists(markerPath);
  if (!resuming && (await canonicalStorePopulated(registry, store))) {
    logger.debug({ legacyDir }, "canonical store already populated; legacy skills not migrated (legacy files may be removed)");
    return report({ legacyDirFound: true, alreadyPopulated: true });
  }
  if (legacyStat.isSymbolicLink() || !legacyStat.isDirectory()) {
    skipped.push({
      file: ".",
      reason: `${legacyDir} is ${legacyStat.isSymbolicLink() ? "a symbolic link" : "not a directory"}; not followed`,
    });
    logger.warn({ legacyDir, skipped }, "legacy skill directory not migrated");
    return report({ legacyDirFound: true });
  }

  const contents = await readLegacyDirectory(legacyDir, skipped, warnings);
  const plans = await planMigration(contents, options.intake, skipped, warnings);

  const migrated: string[] = [];
  if (plans.length > 0) {
    await writeFileAtomic(markerPath, `${JSON.stringify({ started_at: now.toISOString(), legacy_dir: legacyDir })}\n`);
    for (const plan of plans) {
      if (resuming && registry.get(plan.name)) {
        skipped.push({ file: plan.file, reason: "already registered by an earlier, interrupted migration" });
        continue;
      }
      await registerPlan(plan, registry, store, now);
      migrated.push(plan.name);
    }
  }
  await unlink(markerPath).catch(() => undefined);

  if (migrated.length > 0) {
    logger.info(
      { legacyDir, canonicalDir: store.directory, migrated },
      `migrated ${migrated.length} legacy skill(s) into the canonical store; they were not re-tested ` +
        "(the legacy system accepted them) and the legacy files were left in place for manual cleanup",
    );
  }
  if (skipped.length > 0) logger.warn({ legacyDir, skipped }, "legacy skill files not migrated");
  if (warnings.length > 0) logger.warn({ legacyDir, warnings }, "legacy metadata replaced by defaults");
  return report({ legacyDirFound: true, migrated });
}

/**
 * One plan per legacy file that passes its checks and the intake gate (in name order); the rest
 * are pushed to `skipped`, with index entries that name no file.
 */
async function planMigration(
  { candidates, seen, index }: LegacyContents,
  intake: CodeIntake | undefined,
  skipped: SkippedFile[],
  warnings: string[],
): Promise<MigrationPlan[]> {
  const plans: MigrationPlan[] = [];
  for (const candidate of candidates.sort((a, b) => a.name.localeCompare(b.name))) {
    const plan = planSkill(candidate, index.get(candidate.name), warnings);
    if ("skip" in plan) {
      skipped.push({ file: candidate.file, reason: plan.skip });
      continue;
    }
    if (!intake) {
      plans.push(plan);
      continue;
    }
    try {
      const prepared = await intake.prepare(plan.code);
      for (const note of prepared.normalizations) warnings.push(`${plan.file}: ${note}`);
      for (const finding of prepared.warnings)
        warnings.push(`${plan.file}: content guard caution "${finding.ruleId}" at line ${finding.line}`);
      plans.push({ ...plan, code: prepared.code });
    } catch (error) {
      if (!(error instanceof InvalidArgumentError)) throw error;
      skipped.push({ file: plan.file, reason: `rejected by intake: ${error.message}` });
    }
  }
  for (const name of index.keys()) {
    if (!seen.has(name)) {
      skipped.push({ file: `${name}.py`, reason: `listed in the legacy ${LEGACY_INDEX_FILE} but there is no such file` });
    }
  }
  return plans;
}

/** Copies one planned skill into the canonical store and registers it as version 1. */
async function registerPlan(plan: MigrationPlan, registry: SkillRegistry, store: CanonicalStore, now: Date): Promise<void> {
  // The order of a registration: history file, registry row, active file, then the move of
  // a non-live skill; reconcile finishes any of these steps that a crash cuts short.
  await store.writeVersion(plan.name, 1, plan.code);
  registry.importSkill({
    name: plan.name,
    status: plan.status,
    statusReason: plan.statusReason,
    activeVersion: 1,
    usageCount: plan.usageCount,
    failureCount: plan.failureCount,
    protected: plan.protected,
    autoCreated: true,
    createdAt: plan.createdAt,
    lastInvokedAt: plan.lastInvokedAt,
    // The legacy layout knew one agent; an admin can publish or transfer these later.
    access: { owner: LOCAL_AGENT, visibility: "private" },
    versions: [
      {
        name: plan.name,
        version: 1,
        description: plan.description,
        parametersSchema: plan.parametersSchema,
        testPayload: plan.testPayload,
        contentHash: contentHash(plan.code),
        origin: "migrate",
        createdAt: plan.createdAt,
      },
    ],
  });
  await store.writeActive(plan.name, plan.code);
  const location = locationOf(plan.status);
  if (location !== "active") await store.moveSkill(plan.name, "active", location, now);
}

/** A registry row or a `.py` in any location means the store is in use (or awaits a rebuild). */
async function canonicalStorePopulated(registry: SkillRegistry, store: CanonicalStore): Promise<boolean> {
  if (!registry.isEmpty()) return true;
  for (const location of STORE_LOCATIONS) {
    if ((await store.activeNames(location)).length > 0) return true;
  }
  return false;
}
