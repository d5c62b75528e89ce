import type { SkillRecord } from "../control/index.js";
import type { FolderHeader, FolderRun, FolderSkillRuns } from "../control/index.js";
import type { FolderStore } from "./folder-store.js";
import { folderLauncher } from "./launcher.js";
import type { SourceStore } from "./source-store.js";

/**
 * What the control plane's use cases read of folder skills (the port `FolderSkillRuns`): which
 * names are kept as folders, their kind and id, and how a version runs. Only the source rows and
 * the canonical folders behind them: built before the control plane, it needs nothing of it.
 */
export class FolderSkillReads implements FolderSkillRuns {
  constructor(private readonly stores: { readonly sources: SourceStore; readonly folders: FolderStore }) {}

  isFolderSkill(name: string): boolean {
    return this.stores.sources.latest(name) !== undefined;
  }

  /** Kind and id of a folder skill's active version, for GetSkill, routing headers and the console. */
  header(record: SkillRecord): FolderHeader | undefined {
    const row = this.stores.sources.get(record.name, record.version);
    return row ? { kind: row.kind === "executable" ? "directory" : "instructions", skillId: row.skillId } : undefined;
  }

  async runOf(name: string, version: number): Promise<FolderRun | undefined> {
    const row = this.stores.sources.get(name, version);
    if (!row) return undefined;
    if (row.kind === "instructions") return { kind: "instructions" };
    return { kind: "executable", launcher: folderLauncher(row.entrypoint), folder: await this.stores.folders.read(name, version) };
  }
}
