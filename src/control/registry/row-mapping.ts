/**
 * How registry rows become records: the columns of `skills`, `skill_versions`, `skill_grants` and
 * `invocations` as SQLite returns them, the one SELECT every skill record is read with, and the
 * conversions. The tables themselves are created by src/schema/.
 */
import type { InvocationOutcome, SkillGrant, SkillRecord, SkillVisibility, VersionRecord } from "./records.js";
import { VERSION_ORIGINS } from "./records.js";
import { SKILL_STATUSES } from "./skill-health.js";

/** A row of {@link SELECT_SKILL}: the skill's columns, its latest version number and its grants as JSON. */
export interface SkillRow {
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
  /** `[requirements, system_packages, environment_id, secrets, network_allow]` of the active version. */
  packages_json: string | null;
}

interface GrantRow {
  name: string;
  grantee_kind: string;
  grantee: string;
  version: number | null;
  granted_by: string;
  granted_at: number;
}

export interface VersionRow {
  name: string;
  version: number;
  description: string;
  parameters_schema: string;
  test_payload: string;
  content_hash: string;
  origin: string;
  created_at: number;
  requirements: string;
  system_packages: string;
  environment_id: string;
  /** JSON list of the declared secret names (docs/architecture.md's step 14). */
  secrets: string;
  /** JSON list of the declared hosts, canonical (docs/security.md#declaring-hosts). */
  network_allow: string;
  /** `[{path, size_bytes, sha256}]` of its test files in order, from {@link SELECT_VERSION}. */
  test_files_json: string | null;
}

/** Every version record is read with this (over `skill_versions v`; append a WHERE), its test files joined. */
export const SELECT_VERSION = `SELECT v.*, (SELECT json_group_array(json_object('path', t.path, 'size_bytes', t.size_bytes, 'sha256', t.sha256))
                                  FROM (SELECT * FROM skill_version_test_files
                                         WHERE name = v.name AND version = v.version ORDER BY position) t) AS test_files_json
                        FROM skill_versions v`;

/** A row of `invocations` (`SELECT *`). */
export type InvocationRow = Record<string, number | string>;

/** The columns of {@link SELECT_SKILL} without its FROM, for queries that join more to `skills s`. */
export const SELECT_SKILL_COLUMNS = `SELECT s.*, (SELECT MAX(v.version) FROM skill_versions v WHERE v.name = s.name) AS latest_version,
                             (SELECT json_group_array(json_object('name', g.name, 'grantee_kind', g.grantee_kind, 'grantee', g.grantee,
                                                                  'version', g.version, 'granted_by', g.granted_by, 'granted_at', g.granted_at))
                                FROM (SELECT * FROM skill_grants WHERE name = s.name ORDER BY granted_at, grantee_kind, grantee) g) AS grants_json,
                             (SELECT json_array(a.requirements, a.system_packages, a.environment_id, a.secrets, a.network_allow)
                                FROM skill_versions a WHERE a.name = s.name AND a.version = s.version) AS packages_json`;

/** Every skill record is read with this (over `skills s`; append a WHERE), so all carry the same columns. */
export const SELECT_SKILL = `${SELECT_SKILL_COLUMNS}
                      FROM skills s`;

export function toRecord(row: SkillRow): SkillRecord {
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
    ...activePackages(row),
  };
}

/** The active version's declared packages, secret names and hosts, from {@link SELECT_SKILL}'s `packages_json`. */
function activePackages(
  row: SkillRow,
): Pick<SkillRecord, "requirements" | "systemPackages" | "environmentId" | "secrets" | "networkAllow"> {
  const [requirements, systemPackages, environmentId, secrets, networkAllow] = JSON.parse(
    row.packages_json ?? '["[]", "[]", "", "[]", "[]"]',
  ) as [string, string, string, string, string];
  return {
    requirements: JSON.parse(requirements) as string[],
    systemPackages: JSON.parse(systemPackages) as string[],
    environmentId,
    secrets: JSON.parse(secrets) as string[],
    networkAllow: JSON.parse(networkAllow) as string[],
  };
}

/** The visibility column holds the owner's choice (private or public); internal is derived from the grants. */
export function storedVisibility(visibility: SkillVisibility): "private" | "public" {
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

export function toVersionRecord(row: VersionRow): VersionRecord {
  return {
    name: row.name,
    version: row.version,
    description: row.description,
    parametersSchema: row.parameters_schema,
    testPayload: row.test_payload,
    contentHash: row.content_hash,
    origin: VERSION_ORIGINS.find((o) => o === row.origin) ?? "register",
    createdAt: new Date(row.created_at),
    ...(row.environment_id !== "" || row.requirements !== "[]" || row.system_packages !== "[]"
      ? {
          packages: {
            requirements: JSON.parse(row.requirements) as string[],
            systemPackages: JSON.parse(row.system_packages) as string[],
            environmentId: row.environment_id,
          },
        }
      : {}),
    ...testFilesOf(row),
    ...(row.secrets !== "[]" ? { secrets: JSON.parse(row.secrets) as string[] } : {}),
    ...(row.network_allow !== "[]" ? { networkAllow: JSON.parse(row.network_allow) as string[] } : {}),
  };
}

function testFilesOf(row: VersionRow): Pick<VersionRecord, "testFiles"> {
  const listed = JSON.parse(row.test_files_json ?? "[]") as Array<{ path: string; size_bytes: number; sha256: string }>;
  if (listed.length === 0) return {};
  return { testFiles: listed.map((t) => ({ path: t.path, sizeBytes: t.size_bytes, sha256: t.sha256 })) };
}

export function toInvocation(row: InvocationRow): InvocationOutcome & { readonly id: number } {
  return {
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
    ...returnedFilesOf(row),
    // Step 17's column: empty for successes and for rows from before it.
    ...(row.stderr_tail ? { stderrTail: String(row.stderr_tail) } : {}),
  };
}

/** The columns of docs/architecture.md's step 13; absent on rows that returned no file. */
function returnedFilesOf(row: InvocationRow): Pick<InvocationOutcome, "outputFiles" | "outputFileCount" | "outputFileBytes"> {
  const count = Number(row.output_file_count ?? 0);
  if (count === 0) return {};
  const listed = JSON.parse(String(row.output_files ?? "[]")) as Array<{ path: string; size_bytes: number; truncated: boolean }>;
  return {
    outputFiles: listed.map((f) => ({ path: f.path, sizeBytes: f.size_bytes, truncated: f.truncated })),
    outputFileCount: count,
    outputFileBytes: Number(row.output_file_bytes ?? 0),
  };
}
