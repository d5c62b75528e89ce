import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_HEALTH_POLICY, SkillRegistry } from "../control/registry/index.js";
import { openRegistryDatabase } from "../sqlite/index.js";
import { WordEmbedder } from "../../test/support/word-embedder.js";
import type { Embedder } from "../embedding/index.js";
import { KeywordIndex, SqliteVecIndex } from "../search/index.js";
import { RoutingService } from "./routing-service.js";
import { SkillRouter } from "./skill-router.js";

/** Bag-of-words vectors that resolve only when told: the embedding is "still running" until then. */
class GatedEmbedder extends WordEmbedder {
  private gate: Promise<void> = Promise.resolve();
  private open: () => void = () => undefined;
  hold(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }
  release(): void {
    this.open();
  }
  override async embed(texts: readonly string[]): Promise<Float32Array[]> {
    await this.gate;
    return super.embed(texts);
  }
}

const logger = pino({ level: "silent" });

describe("RoutingService: indexing after the reply (real SQLite file)", () => {
  let root: string;
  let file: string;
  let registry: SkillRegistry;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "routing-service-test-"));
    file = path.join(root, "registry.db");
    registry = SkillRegistry.open(file, DEFAULT_HEALTH_POLICY);
  });
  afterEach(async () => {
    registry.close();
    await rm(root, { recursive: true, force: true });
  });

  function start(embedder: Embedder): { service: RoutingService; router: SkillRouter; close: () => void } {
    const db = openRegistryDatabase(file, { durable: false });
    const router = new SkillRouter({
      db,
      embedder,
      vectors: new SqliteVecIndex(db, { logger }),
      keywords: new KeywordIndex(db, { logger }),
      logger,
    });
    return { service: new RoutingService(router, registry, DEFAULT_HEALTH_POLICY, logger), router, close: () => db.close() };
  }

  const commit = (name: string, description: string) =>
    registry.commitVersion(
      {
        name,
        version: 1,
        description,
        parametersSchema: "{}",
        testPayload: "{}",
        origin: "register",
        contentHash: "h".repeat(64),
        createdAt: new Date(),
      },
      { owner: "local", visibility: "private" },
    );
  const caller = { agentId: "local", admin: false, authenticated: false };
  const routeNames = async (service: RoutingService, query: string) =>
    (await service.route({ query, limit: 5, mode: "vectors", format: "openai" }, caller)).skills.map((s) => s.skill.name);

  it("marks the skill pending before the embedding, and a route waits for the embedding", async () => {
    const embedder = new GatedEmbedder();
    const { service, router, close } = start(embedder);
    try {
      await service.init();
      embedder.hold();
      const indexed = service.sync(commit("moon_phase", "tells the phase of the moon"), ["is it a full moon tonight"]);
      expect(router.pendingNames()).toEqual(["moon_phase"]);
      const routed = routeNames(service, "full moon tonight");
      embedder.release();
      expect(await routed).toEqual(["moon_phase"]);
      await indexed;
      expect(router.pendingNames()).toEqual([]);
    } finally {
      close();
    }
  });

  it("indexes at the next start a skill whose embedding a crash cut off, example queries included", async () => {
    const first = start(new GatedEmbedder());
    await first.service.init();
    // What a crash right after the reply leaves: the change accepted, nothing embedded.
    const skill = commit("moon_phase", "tells the phase of the moon");
    first.router.accept(skill.name, ["is it a full moon tonight"]);
    first.close();

    const second = start(new GatedEmbedder());
    try {
      await second.service.init();
      expect(await routeNames(second.service, "is it a full moon tonight")).toEqual(["moon_phase"]);
      expect(second.router.pendingNames()).toEqual([]);
    } finally {
      second.close();
    }
  });
});
