import { isLive, type SkillRecord } from "../registry/index.js";
import type { CompositionCore } from "./composition-core.js";
import { type CatalogEntry, type DependencyReport, MandatorySkillError } from "./composition-types.js";
import { parseSkillRef } from "./definition.js";
import { CycleError, loadOrder } from "./graph.js";

/** What keeps a skill from running: dependencies (transitively) that are missing, retired or deleted. */
export function blockers(core: CompositionCore, record: SkillRecord): string[] {
  const blocked: string[] = [];
  const rootKey = `${record.name}@${record.version}`;
  const seen = new Set<string>([rootKey]);
  const queue = [...core.declaredOf(record).dependsOn];
  while (queue.length > 0) {
    const key = queue.shift() as string;
    if (seen.has(key)) continue;
    seen.add(key);
    const ref = parseSkillRef(key, "dependency");
    const dependency = core.registry.get(ref.name);
    if (!dependency) blocked.push(`${key} (missing)`);
    else if (!isLive(dependency.status)) blocked.push(`${key} (${dependency.status})`);
    else if (ref.version !== undefined && !core.registry.version(ref.name, ref.version)) blocked.push(`${key} (no such version)`);
    else queue.push(...core.dependencies.get(ref.name, ref.version ?? dependency.version).dependsOn);
  }
  return blocked;
}

/** Failed re-tests against the dependency versions active now (docs/composition.md#re-tests). */
export function retestWarnings(core: CompositionCore, record: SkillRecord): string[] {
  return core.dependencies
    .failedRetests(record.name)
    .filter((failed) => core.registry.get(failed.dependency)?.version === failed.dependencyVersion)
    .map(
      (failed) => `the stored test of "${record.name}" failed against "${failed.dependency}" v${failed.dependencyVersion}: ${failed.error}`,
    );
}

/** Everything a caller should know before relying on a skill's dependencies. */
export function dependencyWarnings(core: CompositionCore, record: SkillRecord): string[] {
  return [...blockers(core, record).map((b) => `missing dependency ${b}`), ...retestWarnings(core, record)];
}

/** GetSkillDependencies: what a skill names, what names it, the load order, and the warnings. */
export function dependencyReport(core: CompositionCore, record: SkillRecord): DependencyReport {
  const declared = core.declaredOf(record);
  const rootKey = record.name;
  let order: string[];
  try {
    order = loadOrder(rootKey, (key) => (key === rootKey ? declared.dependsOn : core.edgesOf(key)));
  } catch (error) {
    if (!(error instanceof CycleError)) throw error;
    order = [];
  }
  return {
    dependsOn: declared.dependsOn,
    dependents: core.dependents(record.name).map((s) => s.name),
    loadOrder: order,
    warnings: dependencyWarnings(core, record),
  };
}

/** A skill's line in the catalog: ready, blocked by missing dependencies, failed (a cycle), or inactive. */
export function catalogEntry(core: CompositionCore, record: SkillRecord): CatalogEntry {
  const declared = core.declaredOf(record);
  const base = {
    name: record.name,
    kind: declared.kind,
    version: record.version,
    dependsOn: declared.dependsOn,
    blockedBy: [],
    error: "",
    warnings: [],
  };
  if (!isLive(record.status)) return { ...base, status: "inactive", error: record.statusReason };
  try {
    loadOrder(record.name, (key) => (key === record.name ? declared.dependsOn : core.edgesOf(key)));
  } catch (error) {
    if (error instanceof CycleError) return { ...base, status: "failed", error: error.message };
    throw error;
  }
  const blockedBy = blockers(core, record);
  const warnings = retestWarnings(core, record);
  return { ...base, status: blockedBy.length > 0 ? "blocked" : "ready", blockedBy, warnings };
}

/**
 * The boot check (docs/composition.md#mandatory-skills): every mandatory skill is registered,
 * live and ready. Throws MandatorySkillError naming the first that is not.
 */
export function assertMandatory(core: CompositionCore, names: readonly string[]): void {
  for (const name of names) {
    const record = core.registry.get(name);
    if (!record) throw new MandatorySkillError(name, "is not registered");
    const entry = catalogEntry(core, record);
    if (entry.status === "inactive")
      throw new MandatorySkillError(name, `is ${record.status}${record.statusReason ? ` (${record.statusReason})` : ""}`);
    if (entry.status === "blocked")
      throw new MandatorySkillError(name, `is blocked by missing dependencies: ${entry.blockedBy.join(", ")}`);
    if (entry.status === "failed") throw new MandatorySkillError(name, `failed its dependency pre-flight: ${entry.error}`);
  }
}
