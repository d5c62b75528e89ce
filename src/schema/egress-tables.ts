import type { Migration } from "./migration.js";

/**
 * Hosts a version declares (docs/security.md#declaring-hosts): what its runs may reach through the
 * egress gateway, in canonical form, part of the version like its packages and secrets. Existing
 * versions declare none: they keep running with no network at all.
 */
export const EGRESS_MIGRATIONS: readonly Migration[] = [
  {
    concern: "egress",
    summary: "each version's declared hosts (network_allow)",
    sql: `ALTER TABLE skill_versions ADD COLUMN network_allow TEXT NOT NULL DEFAULT '[]';`,
  },
];
