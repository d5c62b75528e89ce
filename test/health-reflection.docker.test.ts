import { createRequire } from "node:module";
import path from "node:path";
import { type Client, credentials, loadPackageDefinition, makeGenericClientConstructor, type ServiceError, status } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { service as healthService } from "grpc-health-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rpcError, startTestEngine, type TestEngine } from "./support/test-engine.js";

const require = createRequire(import.meta.url);
const REFLECTION_PROTO = path.join(
  path.dirname(require.resolve("@grpc/reflection/package.json")),
  "build/proto/grpc/reflection/v1/reflection.proto",
);

type Callback<T> = (error: ServiceError | null, response: T) => void;
interface HealthClient extends Client {
  check(request: { service: string }, callback: Callback<{ status: string }>): void;
}

describe("generic clients can discover and probe the service, without a token even when tokens are configured", () => {
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await startTestEngine({ env: { SKILL_ENGINE_TOKENS: "planner=health-test-token-5d1c9e7a2b" } });
  });
  afterAll(async () => {
    await engine.dispose();
  });

  it("requires a token for SkillEngine itself", async () => {
    expect((await rpcError(engine.client.list())).code).toBe(status.UNAUTHENTICATED);
  });

  it("answers grpc.health.v1.Health for the server and for SkillEngine", async () => {
    const HealthClient = makeGenericClientConstructor(healthService, "Health");
    const client = new HealthClient(`127.0.0.1:${engine.app.port}`, credentials.createInsecure()) as unknown as HealthClient;
    const check = (service: string) =>
      new Promise<{ status: string }>((resolve, reject) =>
        client.check({ service }, (error, response) => (error ? reject(error) : resolve(response))),
      );
    expect((await check("")).status).toBe("SERVING");
    expect((await check("skillengine.v1.SkillEngine")).status).toBe("SERVING");
    expect((await check("skillengine.v1.Playbook")).status).toBe("SERVING");
    client.close();
  });

  it("lists its services and describes SkillEngine through server reflection", async () => {
    const definition = loadSync(REFLECTION_PROTO, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
    const reflection = loadPackageDefinition(definition) as unknown as {
      grpc: {
        reflection: {
          v1: {
            ServerReflection: new (
              address: string,
              creds: ReturnType<typeof credentials.createInsecure>,
            ) => Client & { ServerReflectionInfo(): NodeJS.ReadWriteStream & { write(m: object): void; end(): void } };
          };
        };
      };
    };
    const client = new reflection.grpc.reflection.v1.ServerReflection(`127.0.0.1:${engine.app.port}`, credentials.createInsecure());
    const ask = (request: object) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        const stream = client.ServerReflectionInfo();
        stream.on("data", (message: Record<string, unknown>) => resolve(message));
        stream.on("error", reject);
        stream.write(request);
        stream.end();
      });

    const listed = await ask({ list_services: "" });
    const names = (listed.list_services_response as { service: Array<{ name: string }> }).service.map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(["skillengine.v1.SkillEngine", "skillengine.v1.Playbook", "grpc.health.v1.Health"]));

    const described = await ask({ file_containing_symbol: "skillengine.v1.SkillEngine" });
    const files = (described.file_descriptor_response as { file_descriptor_proto: Buffer[] }).file_descriptor_proto;
    expect(files.length).toBeGreaterThan(0);
    // Every message of the package, from every topic file, so a generic client can build each one.
    const descriptors = Buffer.concat(files).toString("latin1");
    for (const symbol of ["RegisterSkill", "RegisterSkillRequest", "ExecutionResult", "RouteSkillsResponse"]) {
      expect(descriptors).toContain(symbol);
    }
    client.close();
  });
});
