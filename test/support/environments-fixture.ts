import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type Database from "better-sqlite3";
import {
  DEFAULT_ENVIRONMENT_SETTINGS,
  type EnvironmentSettings,
  Environments,
  type SandboxImageInfo,
} from "../../src/environments/index.js";
import { openRegistryDatabase } from "../../src/sqlite/index.js";
import { writeWheel } from "./wheelhouse.js";

/** What the environments' tests count: builds by kind, failures by reason, the last byte total. */
export interface BuildCounts {
  built: ("declarations" | "lock")[];
  failed: string[];
  bytes: number | undefined;
}

export interface EnvironmentsFixture {
  readonly dir: string;
  readonly home: string;
  readonly root: string;
  readonly wheelhouse: string;
  readonly db: Database.Database;
  readonly counts: BuildCounts;
  readonly image: SandboxImageInfo;
  /** A service over the fixture's home and registry; each call is a new instance (another process, as far as memory goes). */
  environments(settings?: Partial<EnvironmentSettings>, now?: () => Date): Environments;
  /** Names under `<home>/environments/` other than the image status cache. */
  entries(): string[];
  close(): void;
}

/**
 * A home with a registry.db, a wheelhouse holding `tiny-pkg` 1.0 and 2.0 and `needs-old` 1.0
 * (which requires `tiny-pkg<2`), and a stand-in sandbox image (an id and an empty dpkg status).
 */
export function environmentsFixture(): EnvironmentsFixture {
  const dir = mkdtempSync(path.join(os.tmpdir(), "skill-envs-"));
  const home = path.join(dir, "home");
  const wheelhouse = path.join(dir, "wheelhouse");
  writeWheel(wheelhouse, { name: "tiny-pkg", version: "1.0", files: { "tiny_pkg/__init__.py": "VALUE = 1\n" } });
  writeWheel(wheelhouse, { name: "tiny-pkg", version: "2.0", files: { "tiny_pkg/__init__.py": "VALUE = 2\n" } });
  writeWheel(wheelhouse, {
    name: "needs-old",
    version: "1.0",
    files: { "needs_old/__init__.py": "import tiny_pkg\nVALUE = tiny_pkg.VALUE\n" },
    requires: ["tiny-pkg<2"],
  });
  const db = openRegistryDatabase(path.join(dir, "registry.db"), { durable: false });
  const counts: BuildCounts = { built: [], failed: [], bytes: undefined };
  const image: SandboxImageInfo = {
    id: () => Promise.resolve("sha256:test-image"),
    pythonVersion: () => Promise.resolve("3.11.2"),
    dpkgStatus: () => Promise.resolve(""),
  };
  const root = path.join(home, "environments");
  return {
    dir,
    home,
    root,
    wheelhouse,
    db,
    counts,
    image,
    environments: (settings = {}, now) =>
      new Environments({
        db,
        home,
        settings: { ...DEFAULT_ENVIRONMENT_SETTINGS, wheelhouse, ...settings },
        image,
        now,
        events: {
          built: (_seconds, from) => counts.built.push(from),
          failed: (reason) => counts.failed.push(reason),
          bytes: (total) => {
            counts.bytes = total;
          },
        },
      }),
    entries: () => {
      try {
        return readdirSync(root)
          .filter((name) => name !== ".image-status")
          .sort();
      } catch {
        return [];
      }
    },
    close: () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
