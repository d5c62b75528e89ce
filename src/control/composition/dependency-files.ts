import { FailedPreconditionError } from "../../errors/index.js";
import type { CompositionCore } from "./composition-core.js";
import type { DependencyFile } from "./composition-types.js";
import { parseSkillRef } from "./definition.js";
import { CycleError, loadOrder } from "./graph.js";

/**
 * The code of every skill a plain skill imports, transitively, in load order (docs/composition.md#dependencies):
 * each as `<name>.py`. FAILED_PRECONDITION naming a dependency that is missing, retired or deleted.
 */
export async function dependencyFiles(core: CompositionCore, rootName: string, dependsOn: readonly string[]): Promise<DependencyFile[]> {
  if (dependsOn.length === 0) return [];
  // A key no reference can spell, so the root's own declaration is what the walk starts from.
  const rootKey = `${rootName}@`;
  let order: string[];
  try {
    order = loadOrder(rootKey, (key) => (key === rootKey ? dependsOn : core.edgesOf(key)));
  } catch (error) {
    if (error instanceof CycleError)
      throw new FailedPreconditionError(`cannot run "${rootName}": dependency cycle ${error.cycle.join(" → ")}`);
    throw error;
  }
  const placed = new Map<string, number>();
  const files: DependencyFile[] = [];
  for (const key of order) {
    if (key === rootKey) continue;
    const dependency = core.resolve(parseSkillRef(key, "dependency"), undefined, `cannot run "${rootName}": its dependency`);
    if (dependency.ref.name === rootName) continue;
    const already = placed.get(dependency.ref.name);
    if (already !== undefined) {
      if (already === dependency.version) continue;
      throw new FailedPreconditionError(
        `cannot run "${rootName}": its dependencies need both v${already} and v${dependency.version} of "${dependency.ref.name}"`,
      );
    }
    placed.set(dependency.ref.name, dependency.version);
    files.push({ name: `${dependency.ref.name}.py`, content: await core.readCode(dependency) });
  }
  return files;
}
