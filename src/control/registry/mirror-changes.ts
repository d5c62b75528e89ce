/**
 * The registry mirror's outbox, `mirror_pending` (docs/operations.md#the-registry-mirror): the skills
 * whose mirror file is behind the registry. Triggers on every table a mirror entry is made of mark a
 * skill in the transaction that changes it; the mirror's writer reads the marks, rewrites those files
 * and settles each mark only if it is still the one it read.
 */
import type Database from "better-sqlite3";
import { withSqlite } from "../../sqlite/index.js";

/** One skill's mark: a change the mirror has not written yet. */
export interface MirrorChange {
  readonly name: string;
  /** The mark's value; a later change of the same skill replaces it with another. */
  readonly change: number;
}

export class MirrorChanges {
  constructor(private readonly db: Database.Database) {}

  /** Up to `limit` marks of names after `after`, in name order. */
  pending(limit: number, after = ""): MirrorChange[] {
    return withSqlite("registry", "read the mirror's pending changes", () =>
      this.db
        .prepare<[string, number], MirrorChange>("SELECT name, change FROM mirror_pending WHERE name > ? ORDER BY name LIMIT ?")
        .all(after, limit),
    );
  }

  /** Removes the marks written, each only if no change has replaced it since it was read. */
  settle(written: readonly MirrorChange[]): void {
    if (written.length === 0) return;
    withSqlite("registry", "settle the mirror's pending changes", () => {
      const remove = this.db.prepare<[string, number]>("DELETE FROM mirror_pending WHERE name = ? AND change = ?");
      this.db.transaction(() => {
        for (const { name, change } of written) remove.run(name, change);
      })();
    });
  }

  /** Marks every skill: the next write rewrites the whole mirror (RebuildIndexes). */
  markAll(): void {
    withSqlite("registry", "mark every skill for the mirror", () =>
      this.db
        .prepare(
          `INSERT INTO mirror_pending (name, change) SELECT name, random() >> 11 FROM skills WHERE true
             ON CONFLICT (name) DO UPDATE SET change = excluded.change`,
        )
        .run(),
    );
  }
}
