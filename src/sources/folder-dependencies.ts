import type { SkillRegistry } from "../control/index.js";
import type { DiscoveredSkill } from "./discovery.js";

/** The skill a `depends_on` entry names (`name` or `name@version`). */
function dependencyName(ref: string): string {
  return ref.split("@")[0]?.trim() ?? "";
}

/**
 * The scan's folders in the order to register them (docs/skill-sources.md#dependencies): a folder
 * after the folders of the same scan it depends on, as seed 002's loader sorts its skills; otherwise
 * discovery order. Folders whose `depends_on` close a cycle among the scan's folders come back
 * `failed`, naming the cycle as RegisterSkill's pre-flight would (their registration could only
 * report a missing dependency).
 */
export function dependencyOrder(found: readonly DiscoveredSkill[]): DiscoveredSkill[] {
  const byName = new Map<string, DiscoveredSkill>();
  for (const skill of found) {
    if (skill.name !== undefined && (skill.status === "discovered" || skill.status === "ready")) byName.set(skill.name, skill);
  }
  const ordered: DiscoveredSkill[] = [];
  const placed = new Set<DiscoveredSkill>();
  const path: DiscoveredSkill[] = [];
  const cycles = new Map<DiscoveredSkill, string>();
  const visit = (skill: DiscoveredSkill): void => {
    if (placed.has(skill)) return;
    const at = path.indexOf(skill);
    if (at >= 0) {
      const members = path.slice(at);
      const reason = `depends_on: would close a dependency cycle: ${[...members, skill].map((m) => m.name).join(" → ")}`;
      for (const member of members) if (!cycles.has(member)) cycles.set(member, reason);
      return;
    }
    path.push(skill);
    for (const ref of skill.manifest?.dependsOn ?? []) {
      const dependency = byName.get(dependencyName(ref));
      if (dependency) visit(dependency);
    }
    path.pop();
    placed.add(skill);
    ordered.push(skill);
  };
  for (const skill of found) visit(skill);
  return ordered.map((skill) => {
    const reason = cycles.get(skill);
    return reason === undefined ? skill : { ...skill, status: "failed", reason };
  });
}

/**
 * What a failed folder is remembered by, so it is not tested again until something changes: its
 * content, and the versions its dependencies have now (a dependency registered or changed later,
 * by a folder or an RPC, is a reason to try again).
 */
export function failureKey(discovered: DiscoveredSkill, registry: SkillRegistry): string {
  const dependencies = (discovered.manifest?.dependsOn ?? []).map((ref) => {
    const record = registry.get(dependencyName(ref));
    return `${ref}=${record ? `${record.status}:${record.version}` : "-"}`;
  });
  return [discovered.contentHash ?? "", ...dependencies].join("\n");
}
