import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, beforeEach } from "vitest";
import {
  CanonicalStore,
  Composition,
  type ControlDependencies,
  type ControlPlane,
  CPythonSyntaxChecker,
  createControlPlane,
  DEFAULT_HEALTH_POLICY,
  MirrorWriter,
  NormalizingGuardedIntake,
  REGISTRY_FILE,
  SkillRegistry,
} from "../../src/control/index.js";
import { DEBIAN_PYTHON } from "../../src/control/intake/index.js";
import { openRegistryDatabase } from "../../src/sqlite/index.js";
import { requireDebianPython } from "./require-debian-python.js";
import { ScriptedSandboxRunner } from "./scripted-sandbox-runner.js";

/** The control plane's use cases over real parts, but for the sandbox: a scripted runner stands in for the engine. */
export interface ControlPlaneFixture {
  readonly control: ControlPlane;
  readonly registry: SkillRegistry;
  readonly store: CanonicalStore;
  readonly runner: ScriptedSandboxRunner;
  /** The service's home: registry.db and the canonical store. */
  readonly home: string;
  close(): Promise<void>;
}

/**
 * Builds the use cases as the composition root does, on a fresh home in the temp directory: a real
 * SkillRegistry (SQLite file), the real canonical store and mirror, real intake (Debian's python3
 * parses), real composition; only the execution plane is the {@link ScriptedSandboxRunner}. `ports`
 * adds the environments' ports (none by default: a declaration of packages is refused).
 */
export async function startControlPlane(
  ports: Pick<ControlDependencies, "environments" | "environmentAdmin"> = {},
): Promise<ControlPlaneFixture> {
  requireDebianPython();
  const home = await mkdtemp(path.join(os.tmpdir(), "control-plane-"));
  const logger = pino({ level: "silent" });
  const file = path.join(home, REGISTRY_FILE);
  const registry = SkillRegistry.open(file, DEFAULT_HEALTH_POLICY);
  const store = new CanonicalStore(home);
  await store.init();
  const mirror = new MirrorWriter(registry, store, logger);
  const compositionDb = openRegistryDatabase(file, { durable: true });
  const composition = new Composition(registry, store, compositionDb, { maxDepth: 4, composedSkillsPerAgent: 50 });
  const intake = new NormalizingGuardedIntake(new CPythonSyntaxChecker({ pythonPath: DEBIAN_PYTHON, logger }));
  const runner = new ScriptedSandboxRunner();
  const control = createControlPlane({
    registry,
    store,
    runner,
    mirror,
    intake,
    policy: DEFAULT_HEALTH_POLICY,
    logger,
    composition,
    ...ports,
  });
  return {
    control,
    registry,
    store,
    runner,
    home,
    async close() {
      await mirror.close();
      await intake.close();
      await composition.close();
      compositionDb.close();
      registry.close();
      await rm(home, { recursive: true, force: true });
    },
  };
}

/**
 * A fresh control plane for each test of the calling `describe` (closed after it), with `seed` run
 * on it first; returns a getter for the current one.
 */
export function controlPlanePerTest(
  seed: (fixture: ControlPlaneFixture) => Promise<unknown> = async () => undefined,
): () => ControlPlaneFixture {
  let current: ControlPlaneFixture | undefined;
  beforeEach(async () => {
    current = await startControlPlane();
    await seed(current);
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return () => {
    if (!current) throw new Error("the control plane exists only while a test runs");
    return current;
  };
}
