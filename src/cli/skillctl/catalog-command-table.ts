import type { CommandSpec } from "./command-options.js";

/** skillctl's commands on composed skills, dependencies, skill folders and bundles. */
export const CATALOG_COMMANDS: Record<string, CommandSpec> = {
  compose: {
    positionals: [1, 1],
    options: [],
    usage:
      "compose <file.json|file.yaml>\n" +
      "      Registers a composed skill (or a new version of one) described by the file: name, description,\n" +
      "      parameters_schema, steps [{id, skill, args, when, on_failure}], output, test_payload, visibility.\n" +
      "      The whole composition is test-run first; prints each step of the test run.",
  },
  deps: {
    positionals: [1, 1],
    options: [],
    usage: "deps <name>\n      What a skill depends on, what depends on it, its load order, and what blocks it.",
  },
  catalog: {
    positionals: [0, 0],
    options: [],
    usage:
      "catalog\n      Every skill with its dependency status: ready, blocked (by which dependency), failed, inactive; and every\n      skill folder that is not (yet) a ready skill: discovered, blocked, failed, shadowed (docs/skill-sources.md).",
  },
  sources: {
    positionals: [0, 0],
    options: [],
    usage:
      "sources\n      The folders the last scan of SKILL_ENGINE_SKILL_DIRS found: folder, name, kind, status (discovered, ready,\n" +
      "      blocked, failed, shadowed), version, .skill_id and the reason.",
  },
  rescan: {
    positionals: [0, 0],
    options: [],
    usage: "rescan\n      Scans the skill directories now (admin only): registers new and edited folders, retires removed ones.",
  },
  content: {
    positionals: [1, 1],
    options: [],
    usage: "content <name|skill_id>\n      A folder skill's SKILL.md body ({baseDir} resolved) and its bundled files with sizes.",
  },
  import: {
    positionals: [1, 1],
    options: ["public", "private", "reject-duplicates"],
    usage:
      "import <bundle.tar.gz|bundle.zip> [--public|--private] [--reject-duplicates]\n" +
      "      Registers the skill folder in the bundle through the same checks and test run as every skill.\n" +
      "      Near-duplicates of skills the caller can see are listed; --reject-duplicates refuses one.",
  },
  export: {
    positionals: [1, 1],
    options: ["output"],
    usage:
      "export <name> [-o file]\n      Writes the skill as a .tar.gz bundle (default <name>.tar.gz); plain skills get a generated SKILL.md.",
  },
};
