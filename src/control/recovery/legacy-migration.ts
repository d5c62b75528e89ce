import { createHash } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { access, lstat, open, readdir, unlink } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "pino";
import { errorMessage, InvalidArgumentError } from "../../errors/index.js";
import { LOCAL_AGENT } from "../../identity/index.js";
import { type CodeIntake, compileParametersSchema, LIMITS, SKILL_NAME_PATTERN } from "../intake/index.js";
import type { SkillRegistry, SkillStatus } from "../registry/index.js";
import { type CanonicalStore, contentHash, locationOf, pathExists, STORE_LOCATIONS, writeFileAtomic } from "../store/index.js";
import { countField, dateField, firstField, isRecord, stringField } from "./lenient-fields.js";

/** The legacy location of skills, relative to `$SKILL_ENGINE_SANDBOX_DIR`. */
export const LEGACY_SKILLS_DIR = "acquired_skills";
const LEGACY_RETIRED_DIR = "retired";
const LEGACY_INDEX_FILE = "skills_registry.json";
const LEGACY_INDEX_MAX_BYTES = 16 * 1024 * 1024;

/**
 * Written into the canonical directory before the first skill is copied and removed after the
 * last: a migration that a crash interrupted resumes at the next start instead of stopping at
 * "the store is populated" with half the skills.
 */
export const MIGRATION_MARKER_FILE = ".legacy-migration-in-progress";

const DEFAULT_SCHEMA = '{"type":"object"}';
const DEFAULT_TEST_PAYLOAD = "{}";

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
 * The legacy directory was writable by sandboxed code, so it is read as hostile: symlinks are
 * never followed (the directory and each file are opened with O_NOFOLLOW), only regular files
 * of at most {@link LIMITS.codeBytes} bytes of valid UTF-8 with a valid skill name are taken,
 * and a file whose content no longer matches the hash the legacy `skills_registry.json`
 * recorded for it is skipped (it changed after the legacy system accepted it).
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
  const skipped: Array<{ file: string; reason: string }> = [];
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

  const candidates: LegacyFile[] = [];
  const seen = new Set<string>();
  let index = new Map<string, Record<string, unknown>>();
  const notFollowed = (file: string) => (error: unknown) => {
    if ((error as NodeJS.ErrnoException).code !== "ELOOP") throw error;
    skipped.push({ file, reason: "became a symbolic link while being read; not followed" });
  };
  await withDirectoryNoFollow(legacyDir, async (base) => {
    index = await readLegacyIndex(base, warnings);
    candidates.push(...(await readSkillFiles(base, "", skipped, seen)));
    const retiredStat = await lstat(path.join(base, LEGACY_RETIRED_DIR)).catch(() => undefined);
    if (retiredStat?.isSymbolicLink()) {
      skipped.push({ file: `${LEGACY_RETIRED_DIR}/`, reason: "is a symbolic link; not followed" });
    } else if (retiredStat?.isDirectory()) {
      await withDirectoryNoFollow(path.join(base, LEGACY_RETIRED_DIR), async (retiredBase) => {
        for (const file of await readSkillFiles(retiredBase, `${LEGACY_RETIRED_DIR}/`, skipped, seen)) {
          if (candidates.some((c) => c.name === file.name)) {
            skipped.push({ file: file.file, reason: `duplicate of ${file.name}.py, which is migrated instead` });
          } else {
            candidates.push({ ...file, retiredInLegacy: true });
          }
        }
      }).catch(notFollowed(`${LEGACY_RETIRED_DIR}/`));
    }
  }).catch(notFollowed("."));

  const plans: MigrationPlan[] = [];
  for (const candidate of candidates.sort((a, b) => a.name.localeCompare(b.name))) {
    const plan = planSkill(candidate, index.get(candidate.name), warnings);
    if ("skip" in plan) {
      skipped.push({ file: candidate.file, reason: plan.skip });
      continue;
    }
    if (!options.intake) {
      plans.push(plan);
      continue;
    }
    try {
      const prepared = await options.intake.prepare(plan.code);
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

  const migrated: string[] = [];
  if (plans.length > 0) {
    await writeFileAtomic(markerPath, `${JSON.stringify({ started_at: now.toISOString(), legacy_dir: legacyDir })}\n`);
    for (const plan of plans) {
      if (resuming && registry.get(plan.name)) {
        skipped.push({ file: plan.file, reason: "already registered by an earlier, interrupted migration" });
        continue;
      }
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

/** A registry row or a `.py` in any location means the store is in use (or awaits a rebuild). */
async function canonicalStorePopulated(registry: SkillRegistry, store: CanonicalStore): Promise<boolean> {
  if (!registry.isEmpty()) return true;
  for (const location of STORE_LOCATIONS) {
    if ((await store.activeNames(location)).length > 0) return true;
  }
  return false;
}

interface LegacyFile {
  /** Relative to the legacy directory, for the report. */
  readonly file: string;
  readonly name: string;
  readonly code: string;
  readonly bytes: Buffer;
  readonly stats: Stats;
  readonly retiredInLegacy: boolean;
}

/**
 * Opens a directory without following a symlink and runs `work` on a path that resolves to the
 * opened directory itself (Linux `/proc/self/fd/N`), so a rename race cannot swap it under us.
 */
async function withDirectoryNoFollow(directory: string, work: (base: string) => Promise<void>): Promise<void> {
  const handle = await open(directory, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    const pinned = `/proc/self/fd/${handle.fd}`;
    const base = (await access(pinned).then(
      () => true,
      () => false,
    ))
      ? pinned
      : directory;
    await work(base);
  } finally {
    await handle.close();
  }
}

async function readSkillFiles(
  base: string,
  prefix: string,
  skipped: Array<{ file: string; reason: string }>,
  seen: Set<string>,
): Promise<LegacyFile[]> {
  const found: LegacyFile[] = [];
  for (const entry of await readdir(base, { withFileTypes: true })) {
    if (!entry.name.endsWith(".py")) continue;
    const file = `${prefix}${entry.name}`;
    const name = entry.name.slice(0, -".py".length);
    seen.add(name);
    const skip = (reason: string): void => {
      skipped.push({ file, reason });
    };
    if (entry.isSymbolicLink()) {
      skip("is a symbolic link; not followed");
      continue;
    }
    if (!entry.isFile()) {
      skip("is not a regular file");
      continue;
    }
    if (!SKILL_NAME_PATTERN.test(name)) {
      skip("is not a valid skill name: use 1-64 letters, digits, '_' or '-', starting with a letter or '_'");
      continue;
    }
    if (/^__\w*__$/.test(name)) {
      skip("is a Python module marker, not a skill");
      continue;
    }
    const read = await readRegularFile(path.join(base, entry.name), LIMITS.codeBytes);
    if ("skip" in read) {
      skip(read.skip);
      continue;
    }
    let code: string;
    try {
      // ignoreBOM keeps the bytes exactly as they were, so the hash is the file's own.
      code = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(read.bytes);
    } catch {
      skip("is not valid UTF-8");
      continue;
    }
    if (code.includes("\0")) {
      skip("contains a NUL byte; Python source cannot");
      continue;
    }
    if (code.trim() === "") {
      skip("is empty");
      continue;
    }
    found.push({ file, name, code, bytes: read.bytes, stats: read.stats, retiredInLegacy: false });
  }
  return found;
}

/** Reads a regular file without following a symlink and without reading past `limit` bytes. */
async function readRegularFile(
  file: string,
  limit: number,
): Promise<{ bytes: Buffer; stats: Stats } | { skip: string; missing?: boolean }> {
  let handle;
  try {
    // O_NONBLOCK: a FIFO planted under a .py name must not hang start-up.
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP") return { skip: "is a symbolic link; not followed" };
    if (code === "ENOENT") return { skip: "does not exist", missing: true };
    return { skip: `cannot be opened: ${code ?? String(error)}` };
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return { skip: "is not a regular file" };
    if (stats.size > limit) return { skip: `is ${stats.size} bytes; the limit is ${limit}` };
    const buffer = Buffer.alloc(limit + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > limit) return { skip: `grew past ${limit} bytes while being read` };
    }
    return { bytes: buffer.subarray(0, length), stats };
  } finally {
    await handle.close();
  }
}

/**
 * The legacy `skills_registry.json`, whatever its shape: an object keyed by name,
 * `{skills: [...]}`, `{skills: {...}}` or a bare array. Unreadable means "no metadata".
 */
async function readLegacyIndex(base: string, warnings: string[]): Promise<Map<string, Record<string, unknown>>> {
  const entries = new Map<string, Record<string, unknown>>();
  const read = await readRegularFile(path.join(base, LEGACY_INDEX_FILE), LEGACY_INDEX_MAX_BYTES);
  if ("skip" in read) {
    if (!read.missing) warnings.push(`legacy ${LEGACY_INDEX_FILE} ${read.skip}; defaults used for every skill`);
    return entries;
  }
  let document: unknown;
  try {
    document = JSON.parse(read.bytes.toString("utf8"));
  } catch (error) {
    warnings.push(`legacy ${LEGACY_INDEX_FILE} is not valid JSON (${errorMessage(error)}); defaults used for every skill`);
    return entries;
  }
  const add = (key: string | undefined, value: unknown): void => {
    if (!isRecord(value)) return;
    const name = (key ?? stringField(value, ["name", "skill_name", "skillName"]))?.replace(/\.py$/, "");
    if (name !== undefined && name !== "") entries.set(name, value);
  };
  const container = isRecord(document) && "skills" in document ? document.skills : document;
  if (Array.isArray(container)) {
    for (const value of container) add(undefined, value);
  } else if (isRecord(container) && (container !== document || looksKeyedByName(container))) {
    for (const [key, value] of Object.entries(container)) add(key, value);
  } else if (isRecord(container)) {
    // `{"skills": ...}` whose value is not a list or map of entries: a skill called "skills".
    for (const [key, value] of Object.entries(document as Record<string, unknown>)) add(key, value);
  } else {
    warnings.push(`legacy ${LEGACY_INDEX_FILE} holds neither a list nor a map of skills; defaults used for every skill`);
  }
  return entries;
}

function looksKeyedByName(value: Record<string, unknown>): boolean {
  return Object.values(value).every(isRecord);
}

type MigrationPlan = {
  readonly file: string;
  readonly name: string;
  readonly code: string;
  readonly description: string;
  readonly parametersSchema: string;
  readonly testPayload: string;
  readonly status: SkillStatus;
  readonly statusReason: string;
  readonly usageCount: number;
  readonly failureCount: number;
  readonly protected: boolean;
  readonly createdAt: Date;
  readonly lastInvokedAt: Date | undefined;
};

const LEGACY_STATUSES: Readonly<Record<string, SkillStatus>> = {
  active: "active",
  degraded: "degraded",
  deprecated: "deprecated",
  retired: "retired",
  archived: "retired",
  deleted: "deleted",
};

/** What to register for one legacy file, from its legacy metadata where usable. */
function planSkill(file: LegacyFile, meta: Record<string, unknown> | undefined, warnings: string[]): MigrationPlan | { skip: string } {
  const { name } = file;
  const m = meta ?? {};
  const warn = (message: string): void => {
    warnings.push(`${name}: ${message}`);
  };

  const recordedHash = stringField(m, ["content_hash", "contentHash", "hash", "sha256"]);
  if (recordedHash !== undefined) {
    const verdict = checkRecordedHash(file.bytes, recordedHash);
    if (verdict === "mismatch") {
      return {
        skip:
          `content does not match the hash the legacy ${LEGACY_INDEX_FILE} recorded (${recordedHash.slice(0, 16)}…): ` +
          "it changed after the legacy system accepted it, possibly from inside the sandbox",
      };
    }
    if (verdict === "unknown-format") warn(`legacy hash ${JSON.stringify(recordedHash.slice(0, 40))} is in an unknown format; not checked`);
  }

  let description = stringField(m, ["description", "desc"])?.trim() ?? "";
  if (description === "") description = `Migrated from legacy sandbox storage (${name}.py)`;
  if (description.length > LIMITS.descriptionChars) {
    warn(`description truncated to ${LIMITS.descriptionChars} characters`);
    description = description.slice(0, LIMITS.descriptionChars);
  }

  let parametersSchema = DEFAULT_SCHEMA;
  const schemaValue = firstField(m, ["parameters_schema", "parametersSchema", "parameters", "input_schema", "schema"]);
  let validatePayload = compileParametersSchema(DEFAULT_SCHEMA);
  if (schemaValue !== undefined) {
    const text = typeof schemaValue === "string" ? schemaValue : JSON.stringify(schemaValue);
    try {
      validatePayload = compileParametersSchema(text);
      parametersSchema = text;
    } catch (error) {
      warn(`legacy parameters schema unusable (${errorMessage(error)}); ${DEFAULT_SCHEMA} used`);
    }
  }

  let testPayload = DEFAULT_TEST_PAYLOAD;
  const payloadValue = firstField(m, ["test_payload", "testPayload"]);
  if (payloadValue !== undefined) {
    const text = typeof payloadValue === "string" ? payloadValue : JSON.stringify(payloadValue);
    try {
      JSON.parse(text);
      testPayload = text;
      try {
        validatePayload("test_payload", text);
      } catch (error) {
        warn(`legacy test payload kept although ${errorMessage(error)}`);
      }
    } catch {
      warn(`legacy test payload is not JSON; ${DEFAULT_TEST_PAYLOAD} used`);
    }
  }

  const legacyStatus = stringField(m, ["status"])?.trim().toLowerCase();
  // A file in the legacy retired/ is retired whatever a (possibly stale) index entry says.
  let status: SkillStatus = file.retiredInLegacy ? "retired" : "active";
  if (!file.retiredInLegacy && legacyStatus !== undefined && legacyStatus !== "") {
    const mapped = LEGACY_STATUSES[legacyStatus];
    if (mapped) status = mapped;
    else warn(`unknown legacy status ${JSON.stringify(legacyStatus)}; registered as ${status}`);
  }
  const statusReason = status === "active" ? "" : `${status} in the legacy system`;

  return {
    file: file.file,
    name,
    code: file.code,
    description,
    parametersSchema,
    testPayload,
    status,
    statusReason,
    usageCount: countField(m, ["usage_count", "usageCount", "uses"]),
    failureCount: countField(m, ["failure_count", "failureCount", "failures"]),
    protected: m.protected === true || m.pinned === true,
    createdAt: dateField(m, ["created_at", "createdAt", "created"]) ?? file.stats.mtime,
    lastInvokedAt: dateField(m, ["last_invoked_at", "lastInvokedAt", "last_used", "last_used_at"]),
  };
}

/** Legacy hashes: sha256 (ours and the legacy system's), sha1 or md5 of the file, hex, maybe shortened or prefixed. */
function checkRecordedHash(bytes: Buffer, recorded: string): "match" | "mismatch" | "unknown-format" {
  const hex = recorded
    .trim()
    .toLowerCase()
    .replace(/^(sha256|sha1|md5)[:-]/, "");
  if (!/^[0-9a-f]{8,128}$/.test(hex)) return "unknown-format";
  const matches = ["sha256", "sha1", "md5"].some((algorithm) => createHash(algorithm).update(bytes).digest("hex").startsWith(hex));
  return matches ? "match" : "mismatch";
}
