import type { VersionRecord } from "../registry/index.js";
import { type CanonicalStore, mirrorFileLabel, type StoreLocation, testFileEntry } from "../store/index.js";

/** What {@link checkedTestFiles} needs of a rebuild's plan for one skill. */
export interface TestFilesPlan {
  readonly skill: { readonly name: string; readonly versions: readonly VersionRecord[] };
  readonly location: StoreLocation;
  /** Versions the mirror does not record as they are. */
  readonly unrecorded: ReadonlySet<number>;
}

/**
 * A rebuild's versions with their test files as the store holds them (docs/files.md#test-files).
 * The mirror's list of a version's test files is checked against the store, read without
 * following links: a file missing or altered there is left out of the version and reported, as a
 * missing code file is. A version the mirror does not record (a crash before the mirror's rewrite)
 * takes the regular files its test-files directory holds, with a warning.
 */
export async function checkedTestFiles(store: CanonicalStore, plan: TestFilesPlan, warnings: string[]): Promise<VersionRecord[]> {
  const { name } = plan.skill;
  const checked: VersionRecord[] = [];
  for (const version of plan.skill.versions) {
    const { testFiles: listed, ...rest } = version;
    if (listed && listed.length > 0) {
      const reading = await store.readTestFiles(name, version.version, listed, plan.location);
      for (const problem of reading.problems) {
        warnings.push(
          `${name}: a test file ${mirrorFileLabel(name)} lists for v${version.version} is missing or altered in the canonical store ` +
            `(${problem}); the version is rebuilt without it`,
        );
      }
      const kept = listed.filter((entry) => reading.files.some((file) => file.path === entry.path));
      checked.push(kept.length > 0 ? { ...rest, testFiles: kept } : rest);
      continue;
    }
    const found = plan.unrecorded.has(version.version) ? await store.listTestFiles(name, version.version, plan.location) : undefined;
    if (!found || (found.files.length === 0 && found.problems.length === 0)) {
      checked.push(version);
      continue;
    }
    warnings.push(
      `${name}: v${version.version} is not in ${mirrorFileLabel(name)} as it is; its ${found.files.length} test file(s) are taken as the canonical store holds them`,
    );
    for (const problem of found.problems) warnings.push(`${name}: v${version.version}'s test files: ${problem}`);
    checked.push(found.files.length > 0 ? { ...rest, testFiles: found.files.map(testFileEntry) } : rest);
  }
  return checked;
}
