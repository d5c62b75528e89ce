import { credentials, type Client, makeGenericClientConstructor, type ServiceError, status } from "@grpc/grpc-js";
import { service as healthService } from "grpc-health-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rpcError, startTestEngine, type TestEngine } from "./support/test-engine.js";

interface HealthClient extends Client {
  check(request: { service: string }, callback: (error: ServiceError | null, response: { status: string }) => void): void;
}

describe("with no reachable engine the service stays up and says what is wrong", () => {
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await startTestEngine({ env: { DOCKER_HOST: "unix:///nonexistent/docker.sock" } });
  });
  afterAll(async () => {
    await engine.dispose();
  });

  it("answers UNAVAILABLE to runs, with the fix, and NOT_SERVING to health checks", async () => {
    const error = await rpcError(engine.client.register({ name: "needs_engine", code: "print(1)" }));
    expect(error.code).toBe(status.UNAVAILABLE);
    expect(error.details).toMatch(/Docker engine cannot be reached.*npm run setup/);

    const Health = makeGenericClientConstructor(healthService, "Health");
    const health = new Health(`127.0.0.1:${engine.app.port}`, credentials.createInsecure()) as unknown as HealthClient;
    const checked = await new Promise<{ status: string }>((resolve, reject) =>
      health.check({ service: "skillengine.v1.SkillEngine" }, (e, r) => (e ? reject(e) : resolve(r))),
    );
    expect(checked.status).toBe("NOT_SERVING");
    health.close();
    const ready = await fetch(`http://127.0.0.1:${engine.app.metricsPort}/readyz`);
    expect([ready.status, await ready.text()]).toEqual([503, "not ready: the sandbox engine cannot be reached\n"]);

    expect((await engine.client.list()).skills).toEqual([]);
  });

  it("a missing sandbox image is UNAVAILABLE naming the image", async () => {
    const noImage = await startTestEngine({ env: { SKILL_ENGINE_IMAGE: "skill-engine-sandbox:does-not-exist" } });
    try {
      const error = await rpcError(noImage.client.register({ name: "needs_image", code: "print(1)" }));
      expect(error.code).toBe(status.UNAVAILABLE);
      expect(error.details).toContain("skill-engine-sandbox:does-not-exist is missing");
    } finally {
      await noImage.dispose();
    }
  });
});
