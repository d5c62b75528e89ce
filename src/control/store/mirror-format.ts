import { z } from "zod";
import { agentIdProblem } from "../../identity/index.js";
import {
  SKILL_STATUSES,
  SKILL_VISIBILITIES,
  type SkillGrant,
  type SkillRecord,
  type SkillStatus,
  type SkillVisibility,
  type TestFileEntry,
  VERSION_ORIGINS,
  type VersionOrigin,
  type VersionPackages,
  type VersionRecord,
} from "../registry/index.js";

/**
 * The registry mirrored beside the canonical files (a file per skill: mirror-files.ts), so the
 * directory alone can rebuild everything (docs/operations.md#rebuilding-the-registry). The schemas
 * below are the one definition of an entry: the writer builds entries of these types, the rebuild
 * reads them back, gathered into one document, through the same schemas, leniently (a damaged field
 * costs that field, never the skill).
 */

/** Version of the layout; bumped when a field changes meaning. */
export const MIRROR_FORMAT = 1;

/** An instant as ISO-8601 text (what `Date.toISOString` writes); anything `Date` parses is read back. */
const instant = z.string().refine((text) => !Number.isNaN(new Date(text).getTime()), "not a date");
const positiveInteger = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

const versionFields = {
  version: positiveInteger,
  content_hash: z.string(),
  description: z.string(),
  /** The JSON Schema as the text the caller sent. */
  parameters_schema: z.string(),
  test_payload: z.string(),
  origin: z.enum(VERSION_ORIGINS),
  created_at: instant,
  /** Only for a version that declared packages (docs/packages.md): what rebuild-registry brings back. */
  requirements: z.array(z.string()).optional(),
  system_packages: z.array(z.string()).optional(),
  environment_id: z.string().optional(),
  /** Only for a version that declares secrets (docs/security.md#declaring-and-delivering): their names, never values. */
  secrets: z.array(z.string().regex(/^[A-Z_][A-Z0-9_]{0,63}$/)).optional(),
  /** Only for a version that declares hosts (docs/security.md#declaring-hosts): canonical, as the registry holds them. */
  network_allow: z.array(z.string().min(1).max(260)).max(32).optional(),
  /** Only for a version with test files (docs/files.md#test-files): their list; the bytes are in the store. */
  test_files: z
    .array(z.object({ path: z.string().min(1), size_bytes: count, sha256: z.string().regex(/^[0-9a-f]{64}$/) }).strict())
    .optional(),
};

const entryFields = {
  name: z.string(),
  description: z.string(),
  /** Parsed JSON Schema, for people reading the file; the exact text is in the versions. */
  parameters_schema: z.unknown(),
  status: z.enum(SKILL_STATUSES),
  status_reason: z.string(),
  version: positiveInteger,
  latest_version: positiveInteger,
  content_hash: z.string(),
  usage_count: count,
  failure_count: count,
  protected: z.boolean(),
  auto_created: z.boolean(),
  created_at: instant,
  updated_at: instant,
  last_invoked_at: instant.nullable(),
  owner: z.string().refine((owner) => agentIdProblem(owner) === undefined, "not an agent id"),
  visibility: z.enum(SKILL_VISIBILITIES),
  /** docs/security.md#system-skills */
  system: z.boolean(),
  enabled: z.boolean(),
  disabled_by: z.string(),
  /** docs/security.md#grants-and-visibility; a version pins the grantee to it. */
  grants: z.array(
    z
      .object({
        grantee_kind: z.enum(["agent", "user"]),
        grantee: z.string().min(1),
        version: positiveInteger.nullable(),
        granted_by: z.string(),
        granted_at: instant,
      })
      .strict(),
  ),
};

const MirrorVersionSchema = z.object(versionFields).strict();
export const MirrorEntrySchema = z.object({ ...entryFields, versions: z.array(MirrorVersionSchema) }).strict();

/** The whole file, exactly as the writer produces it (the strict form; the rebuild reads leniently). */
export const MirrorDocumentSchema = z.object({ format: z.literal(MIRROR_FORMAT), skills: z.array(MirrorEntrySchema) }).strict();

/** One version as the mirror records it. */
export type MirrorVersion = z.infer<typeof MirrorVersionSchema>;
/** One skill as the mirror records it: enough, with the .py files, to rebuild the registry. */
export type MirrorEntry = z.infer<typeof MirrorEntrySchema>;
/** The whole file. */
export type MirrorDocument = z.infer<typeof MirrorDocumentSchema>;

/** The mirror's entry for a registry record and its versions. */
export function toMirrorEntry(record: SkillRecord, versions: readonly VersionRecord[]): MirrorEntry {
  let schema: unknown = record.parametersSchema;
  try {
    schema = JSON.parse(record.parametersSchema);
  } catch {
    // Kept as text: the registry accepted it, so this only happens with a hand-edited database.
  }
  return {
    name: record.name,
    description: record.description,
    parameters_schema: schema,
    status: record.status,
    status_reason: record.statusReason,
    version: record.version,
    latest_version: record.latestVersion,
    content_hash: record.contentHash,
    usage_count: record.usageCount,
    failure_count: record.failureCount,
    protected: record.protected,
    auto_created: record.autoCreated,
    created_at: record.createdAt.toISOString(),
    updated_at: record.updatedAt.toISOString(),
    last_invoked_at: record.lastInvokedAt?.toISOString() ?? null,
    owner: record.owner,
    visibility: record.visibility,
    system: record.system,
    enabled: record.enabled,
    disabled_by: record.disabledBy,
    grants: record.grants.map((g) => ({
      grantee_kind: g.granteeKind,
      grantee: g.grantee,
      version: g.version ?? null,
      granted_by: g.grantedBy,
      granted_at: g.grantedAt.toISOString(),
    })),
    versions: versions.map((v) => ({
      version: v.version,
      content_hash: v.contentHash,
      description: v.description,
      parameters_schema: v.parametersSchema,
      test_payload: v.testPayload,
      origin: v.origin,
      created_at: v.createdAt.toISOString(),
      ...(v.packages
        ? {
            requirements: [...v.packages.requirements],
            system_packages: [...v.packages.systemPackages],
            environment_id: v.packages.environmentId,
          }
        : {}),
      ...(v.secrets && v.secrets.length > 0 ? { secrets: [...v.secrets] } : {}),
      ...(v.networkAllow && v.networkAllow.length > 0 ? { network_allow: [...v.networkAllow] } : {}),
      ...(v.testFiles && v.testFiles.length > 0
        ? { test_files: v.testFiles.map((t) => ({ path: t.path, size_bytes: t.sizeBytes, sha256: t.sha256 })) }
        : {}),
    })),
  };
}

/** What the mirror recorded about one version, read back; a field that was missing or damaged is undefined. */
export interface RecordedVersion {
  readonly version: number;
  readonly contentHash: string | undefined;
  readonly description: string | undefined;
  readonly parametersSchema: string | undefined;
  readonly testPayload: string | undefined;
  readonly origin: VersionOrigin | undefined;
  readonly createdAt: Date | undefined;
  /** What it declared beyond the standard library; undefined: nothing (or not recorded). */
  readonly packages: VersionPackages | undefined;
  /** Its test files' list (docs/files.md#test-files); undefined: none (or not recorded, or damaged). */
  readonly testFiles: readonly TestFileEntry[] | undefined;
  /** The secret names it declares; undefined: none (or not recorded, or damaged). */
  readonly secrets: readonly string[] | undefined;
  /** The hosts it declares; undefined: none (or not recorded, or damaged). */
  readonly networkAllow: readonly string[] | undefined;
}

/** What the mirror recorded about one skill, read back; a field that was missing or damaged is undefined. */
export interface RecordedSkill {
  readonly name: string;
  readonly description: string | undefined;
  readonly parametersSchema: string | undefined;
  readonly status: SkillStatus | undefined;
  readonly statusReason: string | undefined;
  readonly version: number | undefined;
  readonly contentHash: string | undefined;
  readonly usageCount: number | undefined;
  readonly failureCount: number | undefined;
  readonly protected: boolean | undefined;
  readonly autoCreated: boolean | undefined;
  readonly createdAt: Date | undefined;
  readonly lastInvokedAt: Date | undefined;
  readonly owner: string | undefined;
  readonly visibility: SkillVisibility | undefined;
  /** System flag, switch and grants; undefined fields read as "not system, enabled, no grants". */
  readonly system: boolean | undefined;
  readonly enabled: boolean | undefined;
  readonly disabledBy: string | undefined;
  readonly grants: readonly SkillGrant[] | undefined;
  readonly versions: readonly RecordedVersion[];
}

/** A mirror read back: the skills it names, and what about the file was off (each to follow the file's name). */
export interface MirrorReading {
  readonly skills: Map<string, RecordedSkill>;
  readonly problems: string[];
}

/** Each field of a shape, made to read as undefined when it is missing or does not match. */
type Lenient<Shape extends Record<string, z.ZodType>> = { [Key in keyof Shape]: z.ZodCatch<z.ZodOptional<Shape[Key]>> };

function lenient<Shape extends Record<string, z.ZodType>>(shape: Shape): z.ZodObject<Lenient<Shape>> {
  const fields: Record<string, z.ZodType> = {};
  for (const [key, field] of Object.entries(shape)) fields[key] = field.optional().catch(undefined);
  return z.object(fields as Lenient<Shape>);
}

const LenientVersion = lenient(versionFields);
const LenientEntry = lenient(entryFields);
const LenientDocument = z.object({ format: z.unknown(), skills: z.array(z.unknown()) });

/**
 * Reads the mirror, gathered into one `{format, skills}` document, as leniently as it can: a version without a usable
 * number, or an entry without a name, is left out; every other damaged field reads as undefined.
 */
export function readMirrorDocument(document: unknown): MirrorReading {
  const skills = new Map<string, RecordedSkill>();
  const parsed = LenientDocument.safeParse(document);
  if (!parsed.success) return { skills, problems: ['has no "skills" list; descriptions, schemas, counters and statuses get defaults'] };
  const problems: string[] = [];
  if (parsed.data.format !== MIRROR_FORMAT) {
    problems.push(`has format ${JSON.stringify(parsed.data.format)}, expected ${MIRROR_FORMAT}; read as far as it matches`);
  }
  let unusable = 0;
  for (const raw of parsed.data.skills) {
    const entry = LenientEntry.safeParse(raw);
    if (!entry.success || entry.data.name === undefined) {
      unusable++;
      continue;
    }
    const e = entry.data;
    const rawVersions = (raw as { versions?: unknown }).versions;
    const versions = (Array.isArray(rawVersions) ? rawVersions : []).flatMap((item): RecordedVersion[] => {
      const read = LenientVersion.safeParse(item);
      if (!read.success || read.data.version === undefined) return [];
      const v = read.data;
      return [
        {
          version: v.version as number,
          contentHash: v.content_hash,
          description: v.description,
          parametersSchema: v.parameters_schema,
          testPayload: v.test_payload,
          origin: v.origin,
          createdAt: dateOf(v.created_at),
          packages:
            v.requirements || v.system_packages || v.environment_id
              ? { requirements: v.requirements ?? [], systemPackages: v.system_packages ?? [], environmentId: v.environment_id ?? "" }
              : undefined,
          testFiles: v.test_files?.map((t) => ({ path: t.path, sizeBytes: t.size_bytes, sha256: t.sha256 })),
          secrets: v.secrets,
          networkAllow: v.network_allow,
        },
      ];
    });
    skills.set(e.name as string, {
      name: e.name as string,
      description: e.description,
      parametersSchema: schemaText(e.parameters_schema),
      status: e.status,
      statusReason: e.status_reason,
      version: e.version,
      contentHash: e.content_hash,
      usageCount: e.usage_count,
      failureCount: e.failure_count,
      protected: e.protected,
      autoCreated: e.auto_created,
      createdAt: dateOf(e.created_at),
      lastInvokedAt: dateOf(e.last_invoked_at ?? undefined),
      owner: e.owner,
      visibility: e.visibility,
      system: e.system,
      enabled: e.enabled,
      disabledBy: e.disabled_by,
      grants: e.grants?.map((g) => ({
        name: e.name as string,
        granteeKind: g.grantee_kind,
        grantee: g.grantee,
        version: g.version ?? undefined,
        grantedBy: g.granted_by,
        grantedAt: new Date(g.granted_at),
      })),
      versions,
    });
  }
  if (unusable > 0) problems.push(`has ${unusable} entr${unusable === 1 ? "y" : "ies"} without a name; ignored`);
  return { skills, problems };
}

function dateOf(text: string | undefined): Date | undefined {
  return text === undefined ? undefined : new Date(text);
}

/** The entry's schema is written parsed; a hand-edited file may hold it as text. */
function schemaText(schema: unknown): string | undefined {
  if (typeof schema === "string") return schema;
  return typeof schema === "object" && schema !== null && !Array.isArray(schema) ? JSON.stringify(schema) : undefined;
}
