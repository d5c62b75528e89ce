import { readFile } from "node:fs/promises";
import path from "node:path";
import { writeFileAtomic } from "../store/index.js";
import type { CompositionCore } from "./composition-core.js";
import { formatSkillRef, isDefinitionText, isRecord, parseStoredDefinition } from "./definition.js";
import type { DeclaredDependencies, SkillKind } from "./dependency-store.js";

/** The canonical store's copy of every declaration (docs/composition.md#storage). */
const DECLARATIONS_FILE = ".dependencies.json";

const PLAIN: DeclaredDependencies = { kind: "plain", dependsOn: [] };

const isPlain = (declared: DeclaredDependencies): boolean => declared.kind === "plain" && declared.dependsOn.length === 0;

/**
 * What each version declares, kept twice: in the registry and in the canonical store's
 * `.dependencies.json`, so a registry rebuilt from the directory gets them back.
 */
export class DeclarationsFile {
  /** Serializes rewrites of the declarations file. */
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly core: CompositionCore) {}

  /**
   * Records what a version declares, in the registry and in the canonical store's
   * `.dependencies.json` (docs/composition.md#storage), before the version is committed.
   */
  async record(name: string, version: number, declared: DeclaredDependencies): Promise<void> {
    const { dependencies } = this.core;
    // No row already means a plain skill with no dependencies: the common registration writes
    // (and fsyncs) nothing here, unless an earlier, uncommitted attempt left a row for this number
    // (docs/performance.md#registration).
    if (declared.kind === "plain" && declared.dependsOn.length === 0 && !dependencies.has(name, version)) return;
    dependencies.record(name, version, declared);
    await this.write();
  }

  /**
   * Records the declarations a registry lacks (one rebuilt from the directory alone, or skills from
   * before composition existed): from `.dependencies.json` first; else a canonical file that is a
   * definition makes a composed skill, anything else a plain skill with no dependencies. Returns
   * how many composed skills and declarations were recovered.
   */
  async backfill(): Promise<number> {
    const { dependencies, registry } = this.core;
    const found: Array<{ name: string; version: number; declared: DeclaredDependencies }> = [];
    let recovered = 0;
    for (const { name, version, declared } of await this.read()) {
      if (dependencies.has(name, version) || !registry.version(name, version)) continue;
      found.push({ name, version, declared });
      recovered++;
    }
    dependencies.recordMany(found);
    // One query finds the skills still without a declaration: a start reads no record and no file of
    // the skills already declared, whatever the library's size (docs/composition.md#storage).
    const checked: Array<{ name: string; version: number; declared: DeclaredDependencies }> = [];
    for (const { name } of dependencies.undeclared()) {
      const record = registry.get(name);
      if (!record) continue;
      let code: string;
      try {
        code = await this.core.readCode({
          ref: { name },
          record,
          version: record.version,
          contentHash: record.contentHash,
          declared: PLAIN,
        });
      } catch {
        continue; // reconciliation reports unreadable files
      }
      if (!isDefinitionText(code)) {
        checked.push({ name, version: record.version, declared: PLAIN });
        continue;
      }
      let dependsOn: string[] = [];
      try {
        dependsOn = [...new Set((parseStoredDefinition(code)?.steps ?? []).map((step) => formatSkillRef(step.skill)))];
      } catch {
        // A definition edited by hand into something unreadable: composed, and it fails when invoked.
      }
      checked.push({ name, version: record.version, declared: { kind: "composed", dependsOn } });
      recovered++;
    }
    dependencies.recordMany(checked);
    if (found.length > 0 || checked.some((c) => !isPlain(c.declared))) await this.write();
    return recovered;
  }

  private get path(): string {
    return path.join(this.core.store.directory, DECLARATIONS_FILE);
  }

  private write(): Promise<void> {
    const next = this.writing.then(() => {
      const skills: Record<string, Record<string, { kind: SkillKind; depends_on: readonly string[] }>> = {};
      for (const { name, version, declared } of this.core.dependencies.all()) {
        // A plain version without dependencies is what no declaration means: left out, the file holds
        // what a rebuild could not tell from the code alone, not a line per skill.
        if (isPlain(declared)) continue;
        (skills[name] ??= {})[String(version)] = { kind: declared.kind, depends_on: declared.dependsOn };
      }
      return writeFileAtomic(this.path, `${JSON.stringify({ format: 1, skills }, null, 2)}\n`);
    });
    this.writing = next.catch(() => undefined);
    return next;
  }

  /** The canonical store's copy of the declarations; none when the file is missing or unreadable. */
  private async read(): Promise<Array<{ name: string; version: number; declared: DeclaredDependencies }>> {
    let document: unknown;
    try {
      document = JSON.parse(await readFile(this.path, "utf8"));
    } catch {
      return [];
    }
    if (!isRecord(document) || !isRecord(document.skills)) return [];
    const found: Array<{ name: string; version: number; declared: DeclaredDependencies }> = [];
    for (const [name, versions] of Object.entries(document.skills)) {
      if (!isRecord(versions)) continue;
      for (const [versionText, entry] of Object.entries(versions)) {
        const version = Number(versionText);
        if (!Number.isInteger(version) || version < 1 || !isRecord(entry) || !Array.isArray(entry.depends_on)) continue;
        const dependsOn = entry.depends_on.filter((d): d is string => typeof d === "string");
        found.push({ name, version, declared: { kind: entry.kind === "composed" ? "composed" : "plain", dependsOn } });
      }
    }
    return found;
  }
}
