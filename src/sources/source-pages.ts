import { ascending, compareKeys, type Listing, openPage, type Page, type PageKey, type PageRequest } from "../paging/index.js";
import type { SourceEntry } from "./skill-sources.js";
import { sourceCatalogEntry, type SourcedCatalogEntry } from "./source-catalog.js";

/** ListSkillSources' pages: a folder's configured directory and folder, unique within a scan. */
const LIST_SOURCES: Listing = { name: "ListSkillSources", keyShapes: ["ss"] };
/** GetCatalog's pages: ["skills", name] while it lists skills, ["folders", directory, folder] after them. */
const GET_CATALOG: Listing = { name: "GetCatalog", keyShapes: ["ss", "sss"] };

/** The folders of a scan in a stable order: by configured directory, then folder. */
function byLocation(folders: readonly SourceEntry[]): SourceEntry[] {
  return [...folders].sort((a, b) => compareKeys([a.root, a.folder], [b.root, b.folder]));
}

/**
 * ListSkillSources (docs/api.md#pagination): the folders of the last scan by directory and folder.
 * The scan is held in memory and bounded by what the configured directories hold; a rescan between
 * two pages moves no folder that both scans found across the page boundary.
 */
export function sourcesPage(folders: readonly SourceEntry[], request: PageRequest): Page<SourcedCatalogEntry> {
  const window = openPage<[string, string]>(LIST_SOURCES, {}, request);
  const page = window.slice(byLocation(folders), (folder) => [folder.root, folder.folder]);
  return { items: page.items.map(sourceCatalogEntry), nextPageToken: page.nextPageToken };
}

/** What GetCatalog's pages read: skills in keyset pages, and the last scan's folders. */
export interface CatalogSources {
  /** At most `limit` catalog entries of the skills the caller may see, named after `after`, by name. */
  readonly skillsAfter: (after: string | undefined, limit: number) => SourcedCatalogEntry[];
  readonly folders: readonly SourceEntry[];
  /** Whether `name` is a skill the caller may see (its ready folder is then its entry, not a row of its own). */
  readonly listedSkill: (name: string) => boolean;
}

/**
 * GetCatalog (docs/api.md#pagination): first the skills the caller may see, by name, each page one
 * keyset query; then each folder of the last scan that is not the ready source of such a skill (it
 * is blocked, failed, shadowed or waiting, or its skill is not the caller's to see), by directory
 * and folder. A page that ends the skills goes on with the first folders.
 */
export function catalogPage(request: PageRequest, sources: CatalogSources): Page<SourcedCatalogEntry> {
  const window = openPage<PageKey>(GET_CATALOG, {}, request);
  const cursor = window.after;
  const rows: Array<{ readonly entry: SourcedCatalogEntry; readonly key: PageKey }> = [];
  if (cursor === undefined || cursor[0] === "skills") {
    for (const entry of sources.skillsAfter(cursor?.[1] as string | undefined, window.fetch))
      rows.push({ entry, key: ["skills", entry.name] });
  }
  if (rows.length < window.fetch) {
    const folders = byLocation(sources.folders.filter((f) => !(f.status === "ready" && sources.listedSkill(f.name))));
    const after = cursor?.[0] === "folders" ? cursor.slice(1) : undefined;
    const start = after === undefined ? 0 : folders.findIndex((f) => ascending([f.root, f.folder], after));
    for (const folder of start < 0 ? [] : folders.slice(start, start + window.fetch - rows.length)) {
      rows.push({ entry: sourceCatalogEntry(folder), key: ["folders", folder.root, folder.folder] });
    }
  }
  const page = window.page(rows, (row) => row.key);
  return { items: page.items.map((row) => row.entry), nextPageToken: page.nextPageToken };
}
