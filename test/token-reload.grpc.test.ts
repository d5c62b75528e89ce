import { rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./support/poll.js";
import { type ServiceProcess, spawnService } from "./support/service-process.js";
import { connect, makeDirs, rpcError, type TestClient } from "./support/test-engine.js";

const ALICE = "alice-reload-token-0123";
const BOB = "bob-reload-token-456789";

describe("the tokens file of a running service (SIGHUP) and a broken one at start-up", () => {
  let dirs: Awaited<ReturnType<typeof makeDirs>>;
  let tokensFile: string;
  let service: ServiceProcess | undefined;

  const writeTokens = (tokens: unknown): Promise<void> => writeFile(tokensFile, JSON.stringify({ tokens }), { mode: 0o600 });
  const env = (): Record<string, string> => ({
    SKILL_ENGINE_HOME: dirs.home,
    SKILL_ENGINE_SANDBOX_DIR: dirs.sandboxDir,
    SKILL_ENGINE_TOKENS_FILE: tokensFile,
  });
  const agentOf = async (token: string): Promise<string> => {
    const client: TestClient = connect(service?.port ?? 0, token);
    try {
      return (await client.call(client.raw.whoAmI, {})).agentId;
    } catch (error) {
      return `refused: ${status[(error as { code: number }).code]}`;
    } finally {
      client.close();
    }
  };

  beforeAll(async () => {
    dirs = await makeDirs();
    tokensFile = path.join(dirs.root, "tokens.json");
  });
  afterAll(async () => {
    await service?.kill();
    await rm(dirs.root, { recursive: true, force: true });
  });

  it("refuses to start on a broken tokens file, listing the problems without a stack trace or a token", async () => {
    await writeTokens([
      { agent: "alice", token: "short" },
      { agent: "bob bob", token: BOB },
    ]);
    const failure = await spawnService(env()).then(
      () => new Error("expected the start to fail"),
      (error: unknown) => error as Error,
    );
    expect(failure.message).toMatch(/exited with 2 before listening/);
    expect(failure.message).toContain(`skill-engine: cannot start: SKILL_ENGINE_TOKENS_FILE ${tokensFile}:`);
    expect(failure.message).toContain("tokens[0].token: is 5 characters; use at least 16");
    expect(failure.message).toContain('tokens[1].agent: "bob bob" is not a valid agent id');
    expect(failure.message).not.toContain(BOB);
    expect(failure.message).not.toMatch(/\n\s+at /);
  });

  it("re-reads the file on SIGHUP: added tokens work, revoked ones stop working, a broken file changes nothing", async () => {
    await writeTokens([{ agent: "alice", token: ALICE }]);
    service = await spawnService(env());
    expect(await agentOf(ALICE)).toBe("alice");
    expect(await agentOf(BOB)).toBe("refused: UNAUTHENTICATED");

    await writeTokens([{ agent: "bob", token: BOB, admin: true }]);
    service.child.kill("SIGHUP");
    await eventually("the reloaded token to work", async () => ((await agentOf(BOB)) === "bob" ? true : undefined));
    expect(await agentOf(ALICE)).toBe("refused: UNAUTHENTICATED");
    expect(service.logs).toContainEqual(expect.objectContaining({ msg: "tokens reloaded (SIGHUP)", agents: 1 }));

    await writeFile(tokensFile, "{ broken");
    service.child.kill("SIGHUP");
    await eventually("the refused reload to be logged", () =>
      service?.logs.some((l) => l.msg === "tokens not reloaded; the previous list stays in force") ? true : undefined,
    );
    expect(await agentOf(BOB)).toBe("bob");

    const anonymous = connect(service.port);
    expect((await rpcError(anonymous.list())).code).toBe(status.UNAUTHENTICATED);
    anonymous.close();
    service.child.kill("SIGTERM");
    expect(await service.exited).toEqual({ code: 0, signal: null });
  });
});
