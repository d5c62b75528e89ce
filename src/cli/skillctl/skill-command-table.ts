import type { CommandSpec } from "./command-options.js";

/** skillctl's commands on skills: register, run, read, change, share, and test them. */
export const SKILL_COMMANDS: Record<string, CommandSpec> = {
  whoami: {
    positionals: [0, 0],
    options: [],
    usage: "whoami\n      The agent the service takes this caller (this token) to be, and whether it is an admin.",
  },
  register: {
    positionals: [1, 1],
    options: [
      "name",
      "description",
      "schema",
      "schema-json",
      "test-payload",
      "example",
      "public",
      "private",
      "depends-on",
      "reject-duplicates",
      "system",
      "requirements",
      "system-packages",
      "secrets",
      "network-allow",
      "test-file",
      "out",
      "force",
    ],
    usage:
      "register <file.py> --name N --description D [--schema file.json | --schema-json '{...}'] [--test-payload '{...}'] [--example QUERY]... [--public | --private] [--depends-on NAME[@V]]... [--reject-duplicates]\n" +
      "         [--requirements SPEC]... [--system-packages NAME]... [--secrets NAME]... [--network-allow HOST]...\n" +
      "         [--test-file SANDBOX-PATH=LOCAL-PATH]... [--out DIR [--force]]\n" +
      "      Similar skills the caller can see are listed; --reject-duplicates refuses a near-duplicate (docs/learning.md#near-duplicates).\n" +
      "      Registers (or re-registers as a new version) the skill in <file.py>; the service test-runs it first.\n" +
      '      Schema defaults to {"type":"object"}, test payload to {}. Prints the version, normalizations and warnings.\n' +
      "      A new skill is private (its owner and admins) unless --public; a new version keeps the visibility\n" +
      "      unless --public or --private is given. --system (admin only): a system skill, visible to every agent\n" +
      "      and changed only by admins. --requirements: a PEP 508 requirement (e.g. PyYAML==6.0.1) from the\n" +
      "      operator's index or wheelhouse; --system-packages: a Debian package (e.g. python3-numpy); both repeatable,\n" +
      "      installed into the skill's environment before its test run (docs/packages.md). --test-file: a file for the\n" +
      "      test run under /sandbox/in/SANDBOX-PATH (repeatable); the files the test run returns are listed, and\n" +
      "      written under DIR with --out, as invoke does. --secrets: the name of one of your secrets (skillctl secrets set)\n" +
      "      the skill reads from its environment (repeatable; docs/security.md#declaring-and-delivering). --network-allow:\n" +
      "      a host its runs may reach through the egress gateway: host, host:port, *.domain or an IP literal (repeatable;\n" +
      "      within the operator's SKILL_ENGINE_EGRESS_ALLOWED_HOSTS; docs/security.md#declaring-hosts).",
  },
  invoke: {
    positionals: [1, 2],
    options: ["file", "out", "force"],
    usage:
      "invoke <name> [payload-json] [--file SANDBOX-PATH=LOCAL-PATH]... [--out DIR [--force]]\n" +
      "      Runs the active version (payload defaults to {}). Prints the skill's stdout (--json: the whole result);\n" +
      "      for a composed skill, each step (id, skill, version, outcome) on stderr.\n" +
      "      --file sends LOCAL-PATH to the run as /sandbox/in/SANDBOX-PATH (repeatable; a bare LOCAL-PATH goes\n" +
      "      under its base name). The files the run returns are listed on stderr (path, size, media type);\n" +
      "      --out writes each under DIR at its path: never through a link, never over an existing file\n" +
      "      unless --force (which replaces it). docs/operations.md#files-in-and-out.\n" +
      "      Exit code 0 when the skill succeeded, 1 when it failed, 2 when a returned file was not written.",
  },
  list: {
    positionals: [0, 0],
    options: ["all", "owner"],
    usage:
      "list [--all] [--owner AGENT]\n      Every skill this caller may see (--all: retired and deleted ones too; --owner: only that agent's).",
  },
  show: {
    positionals: [1, 1],
    options: [],
    usage: "show <name>\n      Metadata (owner and visibility included), versions and the active code of one skill.",
  },
  versions: {
    positionals: [1, 1],
    options: [],
    usage: "versions <name>\n      Every version of a skill, oldest first (* marks the active one), with origin, date and test payload.",
  },
  stats: {
    positionals: [1, 1],
    options: [],
    usage: "stats <name>\n      Success rate over the rolling window, invocation velocity, duration percentiles and totals.",
  },
  patch: {
    positionals: [1, 1],
    options: ["find", "replace", "find-file", "replace-file", "test-payload"],
    usage:
      "patch <name> (--find TEXT | --find-file F) (--replace TEXT | --replace-file F) [--test-payload '{...}']\n" +
      "      Replaces the one occurrence of the find text in the active code; the result becomes a new version\n" +
      "      through the same intake and test run as register (test payload defaults to the active version's).\n" +
      "      --find-file/--replace-file take the file's exact content, trailing newline included.",
  },
  route: {
    positionals: [1, Infinity],
    options: ["limit", "format", "min-relevance", "hardening"],
    usage:
      "route <query...> [--limit n] [--format openai|anthropic] [--min-relevance r] [--hardening none|short|full]\n" +
      "      The skills routing picks for a query, each with its relevance (a calibrated probability, comparable\n" +
      "      across queries) and its score (relative to the query's other candidates); with --format, also their\n" +
      "      tool definitions in that format. --min-relevance (0-1, default the service's floor) is the relevance\n" +
      "      the best skill must reach for an answer; 0 lists the best candidates whatever they are.\n" +
      "      --hardening is what each tool description adds about calling it: short (default) one line, full\n" +
      "      seed 000's three lines with an example call, none the description as registered.",
  },
  retire: {
    positionals: [0, 1],
    options: ["dry-run", "force"],
    usage:
      "retire [--dry-run] [--force]\n      Retires every degraded skill matching the retirement rule (--dry-run: only report; --force: skills others depend on too).\n" +
      "retire <name> [--force]\n      Retires that one skill by hand (RestoreSkill brings it back).",
  },
  restore: { positionals: [1, 1], options: [], usage: "restore <name>\n      Brings a retired or deleted skill back." },
  rollback: { positionals: [2, 2], options: [], usage: "rollback <name> <version>\n      Makes an earlier version active again." },
  delete: {
    positionals: [1, 1],
    options: ["force"],
    usage:
      "delete <name> [--force]\n      Soft delete (restorable with `restore`); --force deletes a skill others depend on (they are then blocked).",
  },
  protect: {
    positionals: [1, 1],
    options: [],
    usage: "protect <name>\n      Pins a skill: it is never deprecated or retired automatically.",
  },
  unprotect: { positionals: [1, 1], options: [], usage: "unprotect <name>\n      Removes the pin set by `protect`." },
  visibility: {
    positionals: [2, 2],
    options: [],
    usage:
      "visibility <name> private|public\n      Private: its owner and admins only. Public: every agent may see, route to and invoke it.",
  },
  transfer: {
    positionals: [2, 2],
    options: [],
    usage: "transfer <name> <agent>\n      Gives a skill to another agent (admin only).",
  },
  grant: {
    positionals: [2, 2],
    options: ["version"],
    usage:
      "grant <name> agent:<id>|user:<id> [--version N]\n      Shares a skill with one agent, or with one end user (any delegating agent acting for them);\n" +
      "      a private skill becomes internal. --version pins the grantee to that version. Owner or admin.",
  },
  revoke: {
    positionals: [2, 2],
    options: [],
    usage: "revoke <name> agent:<id>|user:<id>\n      Removes a grant; the last one gone, the skill is private again. Owner or admin.",
  },
  grants: { positionals: [1, 1], options: [], usage: "grants <name>\n      The grants of a skill (owner or admin)." },
  enable: { positionals: [1, 1], options: [], usage: "enable <name>\n      Switches a disabled skill back on. Owner or admin." },
  disable: {
    positionals: [1, 1],
    options: [],
    usage: "disable <name>\n      Switches a skill off: kept whole, but neither routed nor invocable. Owner or admin.",
  },
  test: {
    positionals: [0, Infinity],
    options: ["junit"],
    usage:
      "test [names...] [--junit file.xml]\n" +
      "      Re-runs the stored test payload of every listed (not retired or deleted) skill, or of the named ones,\n" +
      "      through InvokeSkill: each run counts as an invocation in the skill's telemetry and health.\n" +
      "      Reports pass/fail with the one-line cause and 'N passed, M failed'; exit code 1 on any failure.\n" +
      "      --junit writes a JUnit XML report for CI. Progress goes to stderr.",
  },
};
