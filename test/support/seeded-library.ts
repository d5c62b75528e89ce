import { mkdir } from "node:fs/promises";
import path from "node:path";
import {
  CanonicalStore,
  Composition,
  DEFAULT_HEALTH_POLICY,
  REGISTRY_FILE,
  type SkillAccess,
  SkillRegistry,
} from "../../src/control/index.js";
import { contentHash } from "../../src/control/store/index.js";
import { openRegistryDatabase } from "../../src/sqlite/index.js";

export interface SeedOptions {
  /** Owner and visibility of the i-th skill; the local agent's and private unless told. */
  readonly access?: (i: number) => SkillAccess;
  /** Runs once the i-th skill is committed (to record invocations, say). */
  readonly after?: (registry: SkillRegistry, name: string, i: number) => void;
}

/**
 * A home holding `names` as registered skills, written before the service starts: the
 * commit half of a registration for each (history file, declaration, active file, registry version)
 * without its sandboxed test run (tests, and bench/console.ts's homes). Each skill prints `{"n": i}`, i
 * its place in `names`. Start the service with a loopback embedder (EmbeddingsTestServer): start-up
 * indexes every skill for routing.
 */
export async function seedLibrary(home: string, names: readonly string[], options: SeedOptions = {}): Promise<void> {
  const accessOf = options.access ?? ((): SkillAccess => ({ owner: "local", visibility: "private" }));
  await mkdir(home, { recursive: true, mode: 0o700 });
  const file = path.join(home, REGISTRY_FILE);
  const registry = SkillRegistry.open(file, DEFAULT_HEALTH_POLICY);
  const store = new CanonicalStore(home);
  await store.init();
  const db = openRegistryDatabase(file, { durable: false });
  const composition = new Composition(registry, store, db, { maxDepth: 4, composedSkillsPerAgent: 50 });
  try {
    for (const [i, name] of names.entries()) {
      const code = `import json\nprint(json.dumps({"n": ${i}}))\n`;
      await store.writeVersion(name, 1, code);
      await composition.record(name, 1, { kind: "plain", dependsOn: [] });
      const active = await store.prepareActive(name, code);
      registry.commitVersion(
        {
          name,
          version: 1,
          description: `synthetic skill number ${i}`,
          parametersSchema: '{"type":"object"}',
          testPayload: "{}",
          contentHash: contentHash(code),
          origin: "register",
          createdAt: new Date(),
        },
        accessOf(i),
      );
      await active.commit();
      options.after?.(registry, name, i);
    }
  } finally {
    db.close();
    registry.close();
  }
}
