import path from "node:path";
import pino from "pino";
import { startRouting } from "../app.js";
import { REGISTRY_FILE, SkillRegistry } from "../control/index.js";
import { runOperatorCommand } from "./operator-command.js";

const USAGE = `usage: npm run rebuild-routing

Re-creates the routing indexes (keywords, vectors, evidence vectors) from the registry, with the
configured embedder (and Qdrant, when QDRANT_URL is set). The service also does this by itself at
start-up when the indexes do not match the registry or the embedder changed. Stop it first.
`;

/** Entry point: `npm run rebuild-routing`. */
runOperatorCommand({
  name: "rebuild-routing",
  usage: USAGE,
  flags: [],
  exitWhenDone: true,
  async run(config) {
    const logger = pino({ level: "warn" }, pino.destination(2));
    const registry = SkillRegistry.open(path.join(config.home, REGISTRY_FILE), config.healthPolicy);
    try {
      const started = Date.now();
      const routing = await startRouting(config, logger, registry);
      try {
        await routing.service.reindexAll();
      } finally {
        await routing.close();
      }
      const skills = registry.list({ includeInactive: true }).length;
      return `rebuild-routing: re-indexed ${skills} skill(s) in ${Date.now() - started} ms\n`;
    } finally {
      registry.close();
    }
  },
});
