import type { CatalogEntry } from "../control/index.js";
import type { SourceEntry } from "./skill-sources.js";

/**
 * One catalog (docs/skill-sources.md#catalog): composition's entries (GetCatalog), with the
 * folder's id, directory, folder and reason for folder skills, and the folders that are not (or
 * not yet) a ready skill as entries of their own.
 */
export interface SourcedCatalogEntry extends Omit<CatalogEntry, "status" | "kind"> {
  readonly kind: string;
  readonly status: CatalogEntry["status"] | "discovered" | "shadowed";
  readonly skillId: string;
  readonly sourceDirectory: string;
  readonly sourceFolder: string;
  readonly reason: string;
}

/** A folder of the last scan as a catalog entry. */
export function sourceCatalogEntry(entry: SourceEntry): SourcedCatalogEntry {
  const failing = entry.status === "blocked" || entry.status === "failed";
  return {
    name: entry.name,
    kind: entry.kind,
    status: entry.status,
    version: entry.version,
    dependsOn: [],
    blockedBy: [],
    error: failing ? entry.reason : "",
    warnings: [],
    skillId: entry.skillId,
    sourceDirectory: entry.root,
    sourceFolder: entry.folder,
    reason: entry.reason,
  };
}

/**
 * Merges the registry's catalog with the folders of the last scan: a registered folder skill's
 * entry gains its id and location; every folder that is not the ready source of a listed skill
 * (blocked, failed, shadowed, waiting, or failing an edit while an older version stays live) is
 * added as an entry of its own.
 */
export function mergeCatalog(
  base: readonly CatalogEntry[],
  folders: readonly SourceEntry[],
  headerOf: (name: string) => { kind: string; skillId: string; root: string; folder: string } | undefined,
): SourcedCatalogEntry[] {
  const listed = new Set(base.map((entry) => entry.name));
  const merged: SourcedCatalogEntry[] = base.map((entry) => {
    const header = headerOf(entry.name);
    return {
      ...entry,
      kind: header?.kind ?? entry.kind,
      skillId: header?.skillId ?? "",
      sourceDirectory: header?.root ?? "",
      sourceFolder: header?.folder ?? "",
      reason: entry.error,
    };
  });
  for (const folder of folders) {
    if (folder.status === "ready" && listed.has(folder.name)) continue;
    merged.push(sourceCatalogEntry(folder));
  }
  return merged;
}
