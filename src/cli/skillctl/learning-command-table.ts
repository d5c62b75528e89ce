import type { CommandSpec } from "./command-options.js";

/** skillctl's commands on learning from behaviour and on the playbook's lessons. */
export const LEARNING_COMMANDS: Record<string, CommandSpec> = {
  sessions: {
    positionals: [2, 2],
    options: [],
    usage:
      "sessions record <file.json>\n" +
      '      Records a session {"session_key": "...", "tool_calls": [{"tool": "...", "arguments": {...}}]}: repeated tool\n' +
      "      sequences across 3+ sessions become candidates (docs/learning.md#patterns). Prints the candidates it made or touched.",
  },
  candidates: {
    positionals: [0, 0],
    options: ["status"],
    usage:
      "candidates [--status candidate|promoted|dismissed]\n      This agent's skill candidates: id, status, sessions, skill, tool sequence.",
  },
  promote: {
    positionals: [1, 1],
    options: ["name", "description"],
    usage:
      "promote <candidate-id> [--name N] [--description D]\n" +
      "      Turns a candidate into an auto-created composed skill, or evolves the auto-created skill it overlaps by 70%+.",
  },
  dismiss: {
    positionals: [1, 1],
    options: [],
    usage: "dismiss <candidate-id>\n      Marks a candidate dismissed.",
  },
  outcome: {
    positionals: [3, 3],
    options: ["note"],
    usage:
      "outcome <name> <invocation-id> ok|fail [--note TEXT]\n" +
      "      Whether an invocation achieved its goal (invoke --json shows invocation_id); overrides its exit code in the window.",
  },
  lessons: {
    positionals: [1, 2],
    options: [
      "trigger",
      "do",
      "avoid",
      "domain",
      "confidence",
      "source",
      "challenge-hash",
      "challenge-file",
      "public",
      "private",
      "scope",
      "limit",
      "all",
      "owner",
      "original",
      "with-lesson",
      "dry-run",
      "min-retrievals",
      "max-drop",
    ],
    usage:
      "lessons add --trigger T --do D [--avoid A] --domain X [--domain Y]... [--confidence 0.5] [--source S]\n" +
      "              [--challenge-hash H] [--challenge-file F] [--public]\n" +
      "      Adds a lesson to this caller's playbook; the challenge file's text feeds the generalization guard.\n" +
      "lessons list [--scope today|week|all] [--domain D] [--limit n] [--all] [--owner AGENT]\n" +
      "      The playbook by utility, with every counter (--all: archived and deleted lessons too).\n" +
      "lessons show <id>\n" +
      "lessons verify <id> --original pass[:attempts]|fail --with-lesson pass[:attempts]|fail\n" +
      "      Records a verification run; verified only when the outcome strictly improves.\n" +
      "lessons prune [--dry-run] [--min-retrievals n] [--max-drop fraction]\n" +
      "lessons pin <id> | unpin <id> | delete <id> | restore <id>",
  },
  playbook: {
    positionals: [1, Infinity],
    options: ["limit"],
    usage:
      'playbook <query...> [--limit n]\n      Prints the "### SKILL PLAYBOOK:" block the playbook injects for a query (nothing when no lesson qualifies).',
  },
};
