import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_HEALTH_POLICY, SkillRegistry } from "../control/registry/index.js";
import { openRegistryDatabase } from "../sqlite/index.js";
import { WordEmbedder } from "../../test/support/word-embedder.js";
import { KeywordIndex, SqliteVecIndex } from "../search/index.js";
import { RoutingService } from "./routing-service.js";
import { SkillRouter } from "./skill-router.js";

const logger = pino({ level: "silent" });

describe("RoutingService: an agent's own reports steer its own routes (docs/learning.md#your-own-routes)", () => {
  let root: string;
  let registry: SkillRegistry;
  let service: RoutingService;
  let close: () => void;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "own-routes-test-"));
    const file = path.join(root, "registry.db");
    registry = SkillRegistry.open(file, DEFAULT_HEALTH_POLICY);
    const db = openRegistryDatabase(file, { durable: false });
    const router = new SkillRouter({
      db,
      embedder: new WordEmbedder(),
      vectors: new SqliteVecIndex(db, { logger }),
      keywords: new KeywordIndex(db, { logger }),
      logger,
    });
    service = new RoutingService(router, registry, DEFAULT_HEALTH_POLICY, logger);
    close = () => db.close();
    await service.init();
    const skill = registry.commitVersion(
      {
        name: "moon_phase",
        version: 1,
        description: "tells the phase of the moon",
        parametersSchema: "{}",
        testPayload: "{}",
        origin: "register",
        contentHash: "h".repeat(64),
        createdAt: new Date(),
      },
      { owner: "bob", visibility: "public" },
    );
    await service.sync(skill);
  });
  afterEach(async () => {
    close();
    registry.close();
    await rm(root, { recursive: true, force: true });
  });

  const caller = (agentId: string) => ({ agentId, admin: false, authenticated: true });
  const routeNames = async (agentId: string) =>
    (await service.route({ query: "phase of the moon tonight", limit: 5, mode: "vectors", format: "openai" }, caller(agentId))).skills.map(
      (s) => s.skill.name,
    );
  const report = (agentId: string, success: boolean) => {
    const { invocationId } = registry.recordInvocationWithId({
      name: "moon_phase",
      version: 1,
      at: new Date(),
      success: true,
      durationMs: 5,
      exitCode: 0,
      timedOut: false,
      oomKilled: false,
      errorSummary: "",
      caller: agentId,
    });
    registry.recordExplicitOutcome(invocationId, success, "", { agentId, admin: false }, new Date());
  };

  it("a non-owner's failures take the skill out of its own routes only, once it has 3 of them; its successes bring it back", async () => {
    expect(await routeNames("mallory")).toEqual(["moon_phase"]);
    report("mallory", false);
    report("mallory", false);
    expect(await routeNames("mallory")).toEqual(["moon_phase"]);
    report("mallory", false);
    expect(await routeNames("mallory")).toEqual([]);
    expect(await routeNames("alice")).toEqual(["moon_phase"]);
    expect(registry.get("moon_phase")?.status).toBe("active");
    // 2 successes in 5 reports: 40%, at or above the threshold again.
    report("mallory", true);
    report("mallory", true);
    expect(await routeNames("mallory")).toEqual(["moon_phase"]);
  });
});
