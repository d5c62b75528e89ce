import { describe, expect, it } from "vitest";
import { ConfigError, dockerConnection, loadConfig } from "./load-config.js";

describe("loadConfig", () => {
  it("has defaults that work for a local user", () => {
    const config = loadConfig({ HOME: "/home/agent" });
    expect(config).toMatchObject({
      host: "127.0.0.1",
      port: 50051,
      home: "/home/agent/.local/share/skill-engine",
      sandboxDir: "/home/agent/.cache/skill-engine/sandbox",
      image: "skill-engine-sandbox:latest",
      runtime: undefined,
      dockerHost: "unix:///var/run/docker.sock",
      maxConcurrentRuns: 4,
      maxQueuedRuns: 64,
      warmPoolSize: 2,
      warmIdleMs: 300_000,
    });
    expect(loadConfig({ SKILL_ENGINE_POOL: "off" }).warmPoolSize).toBe(0);
    expect(config.limits).toEqual({
      timeoutMs: 10_000,
      memoryBytes: 256 * 1024 * 1024,
      cpus: 1,
      pidsLimit: 64,
      outputLimitBytes: 256 * 1024,
      tmpfsBytes: 64 * 1024 * 1024,
      maxFileBytes: 16 * 1024 * 1024,
      outputFiles: { spaceBytes: 64 * 1024 * 1024, maxFiles: 256, maxFileBytes: 16 * 1024 * 1024, maxTotalBytes: 32 * 1024 * 1024 },
    });
    expect(config.inputFiles).toEqual({ maxFiles: 64, maxTotalBytes: 16 * 1024 * 1024 });
  });

  it("reads every setting from the environment", () => {
    const config = loadConfig({
      SKILL_ENGINE_PORT: "0",
      SKILL_ENGINE_HOME: "/srv/se/home",
      SKILL_ENGINE_SANDBOX_DIR: "/srv/se/sandbox",
      SKILL_ENGINE_RUNTIME: "runsc",
      SKILL_ENGINE_TIMEOUT_MS: "2500",
      SKILL_ENGINE_MEMORY_MB: "128",
      SKILL_ENGINE_CPUS: "0.5",
      DOCKER_HOST: "tcp://127.0.0.1:2375",
    });
    expect(config.port).toBe(0);
    expect(config.runtime).toBe("runsc");
    expect(config.limits.timeoutMs).toBe(2500);
    expect(config.limits.memoryBytes).toBe(128 * 1024 * 1024);
    expect(config.limits.cpus).toBe(0.5);
    expect(dockerConnection(config.dockerHost)).toEqual({ host: "127.0.0.1", port: 2375 });
    expect(dockerConnection("unix:///run/docker.sock")).toEqual({ socketPath: "/run/docker.sock" });
  });

  it("routes with MiniLM on its native runtime, score fusion, a small relevance floor and clause splitting unless told otherwise", () => {
    const config = loadConfig({ HOME: "/home/agent" });
    expect(config.embedder).toEqual({ kind: "minilm", runtime: "native" });
    expect(loadConfig({ SKILL_ENGINE_MINILM_RUNTIME: "wasm" }).embedder).toEqual({ kind: "minilm", runtime: "wasm" });
    expect(() => loadConfig({ SKILL_ENGINE_MINILM_RUNTIME: "gpu" })).toThrow(/SKILL_ENGINE_MINILM_RUNTIME/);
    expect(config.routing).toEqual({ vectorWeight: 0.7, minRelevance: 0.085, splitClauses: true });
    const tuned = loadConfig({
      SKILL_ENGINE_EMBEDDER: "use-lite",
      SKILL_ENGINE_ROUTE_VECTOR_WEIGHT: "0.5",
      SKILL_ENGINE_ROUTE_MIN_RELEVANCE: "0.2",
      SKILL_ENGINE_ROUTE_SPLIT_CLAUSES: "off",
    });
    expect(tuned.embedder).toEqual({ kind: "use-lite" });
    expect(tuned.routing).toEqual({ vectorWeight: 0.5, minRelevance: 0.2, splitClauses: false });
    expect(() => loadConfig({ SKILL_ENGINE_ROUTE_VECTOR_WEIGHT: "1.5", SKILL_ENGINE_EMBEDDER: "bert" })).toThrow(
      /SKILL_ENGINE_ROUTE_VECTOR_WEIGHT[\s\S]*SKILL_ENGINE_EMBEDDER|SKILL_ENGINE_EMBEDDER[\s\S]*SKILL_ENGINE_ROUTE_VECTOR_WEIGHT/,
    );
  });

  it("reads the composition settings: depth, per-agent limit, mandatory skills", () => {
    expect(loadConfig({ HOME: "/h" })).toMatchObject({ composition: { maxDepth: 4, composedSkillsPerAgent: 50 }, mandatorySkills: [] });
    const config = loadConfig({
      HOME: "/h",
      SKILL_ENGINE_COMPOSITION_MAX_DEPTH: "2",
      SKILL_ENGINE_COMPOSED_SKILLS_PER_AGENT: "7",
      SKILL_ENGINE_MANDATORY_SKILLS: " policy, bouncer ,",
    });
    expect(config).toMatchObject({ composition: { maxDepth: 2, composedSkillsPerAgent: 7 }, mandatorySkills: ["policy", "bouncer"] });
    expect(() => loadConfig({ HOME: "/h", SKILL_ENGINE_MANDATORY_SKILLS: "policy,../etc" })).toThrow(
      /SKILL_ENGINE_MANDATORY_SKILLS: must be comma-separated skill names/,
    );
    expect(() => loadConfig({ HOME: "/h", SKILL_ENGINE_COMPOSITION_MAX_DEPTH: "0" })).toThrow(ConfigError);
  });

  it("lists every bad value at once, naming the variable", () => {
    try {
      loadConfig({ SKILL_ENGINE_PORT: "http", SKILL_ENGINE_MEMORY_MB: "-1", DOCKER_HOST: "ssh://x" });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const message = (error as ConfigError).message;
      expect(message).toContain("SKILL_ENGINE_PORT");
      expect(message).toContain("SKILL_ENGINE_MEMORY_MB");
      expect(message).toContain("DOCKER_HOST");
    }
  });

  it("refuses a sandbox dir that contains the canonical store, or the other way round", () => {
    expect(() => loadConfig({ SKILL_ENGINE_HOME: "/data/sandbox/home", SKILL_ENGINE_SANDBOX_DIR: "/data/sandbox" })).toThrow(
      /must not contain each other/,
    );
    expect(() => loadConfig({ SKILL_ENGINE_HOME: "/data", SKILL_ENGINE_SANDBOX_DIR: "/data/sandbox" })).toThrow(
      /must not contain each other/,
    );
    expect(() => loadConfig({ SKILL_ENGINE_HOME: "/data/home", SKILL_ENGINE_SANDBOX_DIR: "/data/home-sandbox" })).not.toThrow();
  });
});
