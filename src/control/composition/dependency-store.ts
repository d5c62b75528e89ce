import type Database from "better-sqlite3";
import { withSqlite } from "../../sqlite/index.js";

export type SkillKind = "plain" | "composed";

/** What one version of a skill declares: its kind and the skills it needs ("name" or "name@version"). */
export interface DeclaredDependencies {
  readonly kind: SkillKind;
  readonly dependsOn: readonly string[];
}

/** A re-test of a dependent against a new version of its dependency that failed. */
export interface FailedRetest {
  readonly dependency: string;
  readonly dependencyVersion: number;
  readonly error: string;
}

const PLAIN: DeclaredDependencies = { kind: "plain", dependsOn: [] };

/**
 * Dependency declarations per skill version, and the outcome of re-tests, in registry.db (tables
 * of this concern, created by its migrations in src/schema). A version with no row is a plain skill with no dependencies:
 * every skill from before composition existed.
 */
export class DependencyStore {
  constructor(private readonly db: Database.Database) {}

  /** Written before the version is committed, so an acknowledged version never lacks its declaration. */
  record(name: string, version: number, declared: DeclaredDependencies): void {
    withSqlite("registry", "record dependencies", () =>
      this.db
        .prepare("INSERT OR REPLACE INTO skill_dependencies (name, version, kind, depends_on) VALUES (?, ?, ?, ?)")
        .run(name, version, declared.kind, JSON.stringify(declared.dependsOn)),
    );
  }

  /** Records many declarations in one transaction (start-up's backfill: one fsync, not one a skill). */
  recordMany(declarations: ReadonlyArray<{ name: string; version: number; declared: DeclaredDependencies }>): void {
    if (declarations.length === 0) return;
    withSqlite("registry", "record dependencies", () => {
      const insert = this.db.prepare("INSERT OR REPLACE INTO skill_dependencies (name, version, kind, depends_on) VALUES (?, ?, ?, ?)");
      this.db.transaction(() => {
        for (const { name, version, declared } of declarations)
          insert.run(name, version, declared.kind, JSON.stringify(declared.dependsOn));
      })();
    });
  }

  /** The skills whose active version has no declaration row, in one query (an anti-join on the primary key). */
  undeclared(): Array<{ name: string; version: number }> {
    return withSqlite("registry", "find skills without a declaration", () =>
      this.db
        .prepare<[], { name: string; version: number }>(
          `SELECT s.name, s.version FROM skills s
             LEFT JOIN skill_dependencies d ON d.name = s.name AND d.version = s.version
            WHERE d.name IS NULL ORDER BY s.name`,
        )
        .all(),
    );
  }

  /** Every declaration, for the copy in the canonical store. */
  all(): Array<{ name: string; version: number; declared: DeclaredDependencies }> {
    return withSqlite("registry", "read dependencies", () =>
      this.db
        .prepare<[], { name: string; version: number; kind: string; depends_on: string }>(
          "SELECT name, version, kind, depends_on FROM skill_dependencies ORDER BY name, version",
        )
        .all()
        .map((row) => ({
          name: row.name,
          version: row.version,
          declared: { kind: row.kind === "composed" ? "composed" : "plain", dependsOn: JSON.parse(row.depends_on) as string[] },
        })),
    );
  }

  has(name: string, version: number): boolean {
    return withSqlite(
      "registry",
      "read dependencies",
      () =>
        this.db
          .prepare<[string, number], { n: number }>("SELECT 1 AS n FROM skill_dependencies WHERE name = ? AND version = ?")
          .get(name, version) !== undefined,
    );
  }

  /**
   * The (name, version) declarations that name `dependency`, unpinned or pinned: one query over
   * the table instead of a read of every skill's declaration (what made a skill's page and
   * GetSkillDependencies cost half a second at 10,000 skills; docs/console.md#cost).
   */
  declaring(dependency: string): Array<{ name: string; version: number }> {
    return withSqlite("registry", "read dependents", () =>
      this.db
        .prepare<[string, string, string], { name: string; version: number }>(
          `SELECT DISTINCT d.name, d.version FROM skill_dependencies d, json_each(d.depends_on) j
           WHERE j.value = ? OR substr(j.value, 1, length(?) + 1) = ? || '@'
           ORDER BY d.name, d.version`,
        )
        .all(dependency, dependency, dependency),
    );
  }

  get(name: string, version: number): DeclaredDependencies {
    const row = withSqlite("registry", "read dependencies", () =>
      this.db
        .prepare<[string, number], { kind: string; depends_on: string }>(
          "SELECT kind, depends_on FROM skill_dependencies WHERE name = ? AND version = ?",
        )
        .get(name, version),
    );
    if (!row) return PLAIN;
    return { kind: row.kind === "composed" ? "composed" : "plain", dependsOn: JSON.parse(row.depends_on) as string[] };
  }

  recordRetest(dependent: string, dependency: string, dependencyVersion: number, passed: boolean, error: string, at: Date): void {
    withSqlite("registry", "record a dependency re-test", () =>
      this.db
        .prepare(
          `INSERT OR REPLACE INTO dependency_retests (dependent, dependency, dependency_version, passed, error, at)
           VALUES (?, ?, ?, ?, ?, ?)`,
        )
        .run(dependent, dependency, dependencyVersion, passed ? 1 : 0, error, at.getTime()),
    );
  }

  /** A new version of the dependent was proven on its own: earlier re-test verdicts no longer apply. */
  clearRetests(dependent: string): void {
    withSqlite("registry", "clear dependency re-tests", () =>
      this.db.prepare("DELETE FROM dependency_retests WHERE dependent = ?").run(dependent),
    );
  }

  failedRetests(dependent: string): FailedRetest[] {
    return withSqlite("registry", "read dependency re-tests", () =>
      this.db
        .prepare<[string], { dependency: string; dependency_version: number; error: string }>(
          "SELECT dependency, dependency_version, error FROM dependency_retests WHERE dependent = ? AND passed = 0 ORDER BY dependency",
        )
        .all(dependent)
        .map((row) => ({ dependency: row.dependency, dependencyVersion: row.dependency_version, error: row.error })),
    );
  }
}
