import type { Logger } from "pino";
import type { CanonicalStore } from "./canonical-store.js";
import type { SkillRecord, SkillRegistry, VersionRecord } from "./skill-registry.js";

/** Version of the `skills_registry.json` layout. */
export const MIRROR_FORMAT = 1;

/** One version as recorded in the mirror. */
export interface MirrorVersion {
  readonly version: number;
  readonly content_hash: string;
  readonly description: string;
  readonly parameters_schema: string;
  readonly test_payload: string;
  readonly origin: string;
  readonly created_at: string;
}

/** One skill as recorded in `skills_registry.json`: enough, with the .py files, to rebuild the registry. */
export interface MirrorEntry {
  readonly name: string;
  readonly description: string;
  /** Parsed JSON Schema, for people reading the file; the text form is in the versions. */
  readonly parameters_schema: unknown;
  readonly status: string;
  readonly status_reason: string;
  readonly version: number;
  readonly latest_version: number;
  readonly content_hash: string;
  readonly usage_count: number;
  readonly failure_count: number;
  readonly protected: boolean;
  readonly auto_created: boolean;
  readonly created_at: string;
  readonly updated_at: string;
  readonly last_invoked_at: string | null;
  readonly owner: string;
  readonly visibility: string;
  readonly versions: readonly MirrorVersion[];
}

export interface MirrorDocument {
  readonly format: number;
  readonly skills: readonly MirrorEntry[];
}

/**
 * Keeps `skills_registry.json` in step with the registry. Changes of code or status flush at
 * once; the counter updates of every invocation are coalesced, so the hot path pays no fsync.
 */
export class MirrorWriter {
  private pending: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly registry: SkillRegistry,
    private readonly store: CanonicalStore,
    private readonly logger: Logger,
    private readonly coalesceMs = 1_000,
  ) {}

  /** Rewrites the mirror now (after any write already in progress). */
  async flush(): Promise<void> {
    if (this.pending) {
      clearTimeout(this.pending);
      this.pending = undefined;
    }
    const next = this.writing.then(() => this.store.writeMirror(this.snapshot()));
    this.writing = next.catch((error: unknown) => {
      this.logger.error({ err: error }, "could not rewrite skills_registry.json");
    });
    await next;
  }

  /** Rewrites the mirror soon; many calls within the window cost one write. */
  schedule(): void {
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      this.flush().catch(() => undefined);
    }, this.coalesceMs);
    this.pending.unref();
  }

  async close(): Promise<void> {
    if (this.pending) await this.flush().catch(() => undefined);
    await this.writing;
  }

  private snapshot(): MirrorDocument {
    return {
      format: MIRROR_FORMAT,
      skills: this.registry
        .list({ includeInactive: true })
        .map((record) => toMirrorEntry(record, this.registry.versions(record.name))),
    };
  }
}

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
    versions: versions.map((v) => ({
      version: v.version,
      content_hash: v.contentHash,
      description: v.description,
      parameters_schema: v.parametersSchema,
      test_payload: v.testPayload,
      origin: v.origin,
      created_at: v.createdAt.toISOString(),
    })),
  };
}
