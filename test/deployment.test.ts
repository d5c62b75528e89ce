import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const run = promisify(execFile);
const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));

interface Service {
  image?: string;
  command?: string[];
  environment: Record<string, string>;
  volumes: string[];
}

describe("docker-compose.yml, as Debian's docker-compose reads it", () => {
  it("is valid, mounts the sandbox dir at the same path, the engine socket, and the home on its own volume", async () => {
    await run("docker-compose", ["-f", "docker-compose.yml", "config", "-q"], { cwd: REPO_ROOT });
    const { stdout } = await run("docker-compose", ["-f", "docker-compose.yml", "--profile", "scale-out", "config"], { cwd: REPO_ROOT });
    // The engine resolves bind mounts on the host: the sandbox dir must be the same path on both sides.
    expect(stdout).toContain("- /var/lib/skill-engine-sandbox:/var/lib/skill-engine-sandbox:rw");
    expect(stdout).toContain("- /var/run/docker.sock:/var/run/docker.sock:rw");
    expect(stdout).toContain("- skill-engine-home:/var/lib/skill-engine:rw");
    expect(stdout).toMatch(/SKILL_ENGINE_SANDBOX_DIR: \/var\/lib\/skill-engine-sandbox/);
    // Calls need tokens (a compose secret); probes and metrics stay on the host's loopback; a stop
    // waits longer than the service's drain.
    expect(stdout).toContain("SKILL_ENGINE_TOKENS_FILE: /run/secrets/skill-engine-tokens");
    expect(stdout).toMatch(/secrets:\n {4}- source: skill-engine-tokens/);
    expect(stdout).toContain("- 127.0.0.1:9464:9464/tcp");
    expect(stdout).toContain("/readyz");
    expect(stdout).toContain("stop_grace_period: 30s");
    // Qdrant comes pinned, in a version with the Query API the adapter uses.
    expect(stdout).toMatch(/image: qdrant\/qdrant:v1\.(1[0-9]|[2-9][0-9])\.\d+/);
  });

  it("has a hosts profile: a NATS bus and two runners, each with its own id and its own sandbox dir at the same path, and no home", async () => {
    const { stdout } = await run("docker-compose", ["-f", "docker-compose.yml", "--profile", "hosts", "config"], {
      cwd: REPO_ROOT,
      env: { ...process.env, SKILL_ENGINE_EXECUTION: "nats", SKILL_ENGINE_NATS_TOKEN: "t" },
    });
    const services = (parse(stdout) as { services: Record<string, Service> }).services;
    expect(services["skill-engine"]?.environment).toMatchObject({
      SKILL_ENGINE_EXECUTION: "nats",
      SKILL_ENGINE_NATS_URL: "nats://nats:4222",
    });
    expect(services.nats?.image).toMatch(/^nats:2\./);
    const runners = ["runner-a", "runner-b"].map((name) => services[name] as Service);
    expect(runners.map((runner) => runner.environment.SKILL_ENGINE_RUNNER_ID)).toEqual(["runner-a", "runner-b"]);
    for (const runner of runners) {
      expect(runner.command).toEqual(["node", "dist/runner-main.js"]);
      const sandboxDir = runner.environment.SKILL_ENGINE_SANDBOX_DIR;
      expect(runner.volumes).toEqual([`${sandboxDir}:${sandboxDir}:rw`, "/var/run/docker.sock:/var/run/docker.sock:rw"]);
      expect(runner.environment.SKILL_ENGINE_HOME).toBeUndefined();
    }
  });
});
