import path from "node:path";
import pino from "pino";
import { startRouting } from "../app.js";
import { loadConfigOrExplain } from "../config/index.js";
import { REGISTRY_FILE, SkillRegistry } from "../control/index.js";

const USAGE = `usage: npm run rebuild-routing

Re-creates the routing indexes (keywords, vectors, evidence vectors) from the registry, with the
configured embedder (and Qdrant, when QDRANT_URL is set). The service also does this by itself at
start-up when the indexes do not match the registry or the embedder changed. Stop it first.
`;

/** Entry point: `npm run rebuild-routing`. Reads the environment once; exits 0 on success, 1 otherwise. */
async function main(argv: readonly string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (argv.length > 0) {
    process.stderr.write(`rebuild-routing: unknown argument ${argv.join(" ")}\n${USAGE}`);
    return 1;
  }
  const config = loadConfigOrExplain("rebuild-routing", process.env);
  if (!config) return 1;
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
    process.stdout.write(`rebuild-routing: re-indexed ${skills} skill(s) in ${Date.now() - started} ms\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`rebuild-routing: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    registry.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`rebuild-routing: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
