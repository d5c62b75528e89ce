/**
 * Every option any skillctl command accepts (each command lists which ones it allows), and the
 * shape of a command's entry; the tables are one module a topic (skill-, operator-, catalog- and
 * learning-command-table.ts).
 */
export const OPTIONS = {
  address: { type: "string" },
  json: { type: "boolean" },
  timeout: { type: "string" },
  help: { type: "boolean", short: "h" },
  name: { type: "string" },
  description: { type: "string" },
  schema: { type: "string" },
  "schema-json": { type: "string" },
  "test-payload": { type: "string" },
  example: { type: "string", multiple: true },
  all: { type: "boolean" },
  limit: { type: "string" },
  "min-relevance": { type: "string" },
  hardening: { type: "string" },
  format: { type: "string" },
  "dry-run": { type: "boolean" },
  junit: { type: "string" },
  "token-file": { type: "string" },
  tls: { type: "boolean" },
  "tls-ca": { type: "string" },
  public: { type: "boolean" },
  private: { type: "boolean" },
  owner: { type: "string" },
  find: { type: "string" },
  replace: { type: "string" },
  "find-file": { type: "string" },
  "replace-file": { type: "string" },
  "depends-on": { type: "string", multiple: true },
  force: { type: "boolean" },
  trigger: { type: "string" },
  do: { type: "string" },
  avoid: { type: "string" },
  domain: { type: "string", multiple: true },
  confidence: { type: "string" },
  source: { type: "string" },
  "challenge-hash": { type: "string" },
  "challenge-file": { type: "string" },
  scope: { type: "string" },
  original: { type: "string" },
  "with-lesson": { type: "string" },
  "min-retrievals": { type: "string" },
  "max-drop": { type: "string" },
  output: { type: "string", short: "o" },
  system: { type: "boolean" },
  version: { type: "string" },
  "reject-duplicates": { type: "boolean" },
  status: { type: "string" },
  note: { type: "string" },
  requirements: { type: "string", multiple: true },
  "system-packages": { type: "string", multiple: true },
  secrets: { type: "string", multiple: true },
  "network-allow": { type: "string", multiple: true },
  "missing-only": { type: "boolean" },
  "value-file": { type: "string" },
  file: { type: "string", multiple: true },
  "test-file": { type: "string", multiple: true },
  out: { type: "string" },
  "page-size": { type: "string" },
} as const;

export type OptionName = keyof typeof OPTIONS;
/** Options every command takes. */
export const GLOBAL: readonly OptionName[] = ["address", "json", "timeout", "help", "token-file", "tls", "tls-ca", "page-size"];

/** One command of the table: what it takes and its usage text. */
export interface CommandSpec {
  /** Positional arguments: min and max (Infinity for "any number"). */
  positionals: [number, number];
  options: readonly OptionName[];
  usage: string;
}
