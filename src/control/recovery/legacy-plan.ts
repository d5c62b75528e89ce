import { createHash } from "node:crypto";
import { errorMessage } from "../../errors/index.js";
import { compileParametersSchema, LIMITS } from "../intake/index.js";
import type { SkillStatus } from "../registry/index.js";
import { LEGACY_INDEX_FILE, type LegacyFile } from "./legacy-files.js";
import { countField, dateField, firstField, stringField } from "./lenient-fields.js";

const DEFAULT_SCHEMA = '{"type":"object"}';
const DEFAULT_TEST_PAYLOAD = "{}";

/** What one legacy skill is registered as: version 1 with its legacy metadata, or defaults where that was unusable. */
export type MigrationPlan = {
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
export function planSkill(
  file: LegacyFile,
  meta: Record<string, unknown> | undefined,
  warnings: string[],
): MigrationPlan | { skip: string } {
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
