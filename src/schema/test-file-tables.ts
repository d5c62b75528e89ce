import type { Migration } from "./migration.js";

/**
 * A version's test files (docs/files.md#test-files): the files its registration's test run was
 * handed under /sandbox/in/, kept with the version like its test payload so that every later test
 * run of it (a patch's, a dependent's re-test) gets the same ones. The bytes live in the canonical
 * store beside the version's history file; this table lists them, with the size and SHA-256 every
 * read checks them against. `position` keeps the order the registration sent them in.
 */
export const TEST_FILE_MIGRATIONS: readonly Migration[] = [
  {
    concern: "files",
    summary: "each version's test files: path, size and SHA-256",
    sql: `CREATE TABLE skill_version_test_files (
            name TEXT NOT NULL,
            version INTEGER NOT NULL CHECK (version >= 1),
            position INTEGER NOT NULL CHECK (position >= 0),
            path TEXT NOT NULL,
            size_bytes INTEGER NOT NULL CHECK (size_bytes >= 0),
            sha256 TEXT NOT NULL,
            PRIMARY KEY (name, version, path)
          ) STRICT;`,
  },
];
