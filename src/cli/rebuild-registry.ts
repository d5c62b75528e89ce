import pino from "pino";
import { CanonicalStore, rebuildRegistry } from "../control/index.js";
import { existsSync } from "node:fs";
import path from "node:path";
import { LEARNING_MIRROR_FILE } from "../learning/index.js";
import { LESSONS_MIRROR_FILE, readLessonsMirror } from "../playbook/index.js";
import { runOperatorCommand } from "./operator-command.js";

const USAGE = `usage: npm run rebuild-registry -- [--force]

Recreates $SKILL_ENGINE_HOME/registry.db from the canonical store
($SKILL_ENGINE_HOME/memory/acquired_skills/: the .py files, their .versions/ history and the
registry's mirror, .registry/). Stop the skill engine first.

  --force   replace a registry.db that still holds skills or cannot be read; the old file
            (and its -wal/-shm) is moved aside to registry.db.bak-<timestamp>, never deleted
  --help    show this text
`;

/** Entry point: `npm run rebuild-registry`. */
runOperatorCommand({
  name: "rebuild-registry",
  usage: USAGE,
  flags: ["--force"],
  async run(config, flags) {
    // The summary (warnings included) goes to stdout; structured logs go to stderr, only on request.
    const verbose = config.logLevel === "debug" || config.logLevel === "trace";
    const logger = pino({ level: verbose ? config.logLevel : "error" }, pino.destination(2));
    const report = await rebuildRegistry({ home: config.home, policy: config.healthPolicy, logger, force: flags.has("--force") });
    const lines = [`Rebuilt ${report.registryFile} with ${report.rebuilt.length} skill(s):`];
    const width = Math.max(...report.rebuilt.map((s) => s.name.length));
    for (const skill of report.rebuilt) {
      const versions = skill.versions.map((v) => `v${v}`).join(", ");
      lines.push(`  ${skill.name.padEnd(width)}  ${skill.status.padEnd(10)}  v${skill.activeVersion} (history: ${versions})`);
    }
    for (const file of report.movedAside) lines.push(`Previous registry file moved aside: ${file}`);
    if (report.warnings.length > 0) {
      lines.push(`${report.warnings.length} warning(s):`);
      for (const warning of report.warnings) lines.push(`  - ${warning}`);
    }
    const lessons = await readLessonsMirror(new CanonicalStore(config.home).directory).catch(() => undefined);
    if (lessons && lessons.lessons.length > 0) {
      lines.push(`${LESSONS_MIRROR_FILE} holds ${lessons.lessons.length} lesson(s): the service restores them when it starts.`);
    }
    if (existsSync(path.join(new CanonicalStore(config.home).directory, LEARNING_MIRROR_FILE))) {
      lines.push(`${LEARNING_MIRROR_FILE} holds candidates, evolution events and outcomes: the service restores them when it starts.`);
    }
    lines.push(
      "Invocation history is not kept in the canonical store and starts empty. Start the service to finish (it reconciles the files).",
    );
    return `${lines.join("\n")}\n`;
  },
});
