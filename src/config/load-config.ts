import os from "node:os";
import path from "node:path";
import { DEFAULT_LESSON_DOMAINS } from "../playbook/index.js";
import type { SkillEngineConfig } from "./config-options.js";
import { environmentSchema, MiB } from "./config-schema.js";
import { egressSettings } from "./egress-settings.js";

/** Thrown at start-up when the environment holds an unusable value; lists every problem. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  - ${problems.join("\n  - ")}`);
    this.name = "ConfigError";
  }
}

/** A host name: dot-separated labels of letters, digits, inner hyphens and underscores (compose service names), an optional final dot. */
const HOST_NAME =
  /^(?=.{1,253}\.?$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/;

/** Reads and validates the configuration; the environment is passed in so tests can set it. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): SkillEngineConfig {
  // Empty variables mean "unset", as in most shells' `VAR= command` habit.
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ""));
  const parsed = environmentSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`));
  }
  const v = parsed.data;
  const homeDir = env.HOME && env.HOME !== "" ? env.HOME : os.homedir();
  const dataHome = env.XDG_DATA_HOME || path.join(homeDir, ".local", "share");
  const cacheHome = env.XDG_CACHE_HOME || path.join(homeDir, ".cache");
  const home = path.resolve(v.SKILL_ENGINE_HOME ?? path.join(dataHome, "skill-engine"));
  const sandboxDir = path.resolve(v.SKILL_ENGINE_SANDBOX_DIR ?? path.join(cacheHome, "skill-engine", "sandbox"));
  const problems: string[] = [];
  const skillDirs = (v.SKILL_ENGINE_SKILL_DIRS ?? "")
    .split(path.delimiter)
    .filter((dir) => dir.trim() !== "")
    .map((dir) => path.resolve(dir));
  for (const dir of skillDirs) {
    if (isSameOrInside(dir, sandboxDir) || isSameOrInside(sandboxDir, dir)) {
      problems.push(`SKILL_ENGINE_SKILL_DIRS: ${dir} and SKILL_ENGINE_SANDBOX_DIR (${sandboxDir}) must not contain each other`);
    }
  }
  const secretsKeyFile = path.resolve(v.SKILL_ENGINE_SECRETS_KEY_FILE ?? path.join(home, "secrets.key"));
  // Places a run can read: the key decrypts every secret (docs/security.md#the-store).
  const exposed: Array<[string, string]> = [
    ["SKILL_ENGINE_SANDBOX_DIR", sandboxDir],
    ["SKILL_ENGINE_HOME's environments/, mounted into runs,", path.join(home, "environments")],
  ];
  for (const [name, dir] of exposed) {
    if (isSameOrInside(secretsKeyFile, dir)) {
      problems.push(`SKILL_ENGINE_SECRETS_KEY_FILE (${secretsKeyFile}) must not be inside ${name} (${dir}): the key decrypts every secret`);
    }
  }
  if (isSameOrInside(home, sandboxDir) || isSameOrInside(sandboxDir, home)) {
    problems.push(
      `SKILL_ENGINE_HOME (${home}) and SKILL_ENGINE_SANDBOX_DIR (${sandboxDir}) must not contain each other: ` +
        "the canonical store must stay outside everything a container can see",
    );
  }
  const minWindowSamples = v.SKILL_ENGINE_WINDOW_MIN_SAMPLES ?? v.SKILL_ENGINE_WINDOW_SIZE;
  if (minWindowSamples > v.SKILL_ENGINE_WINDOW_SIZE) {
    problems.push(
      `SKILL_ENGINE_WINDOW_MIN_SAMPLES (${minWindowSamples}) cannot exceed SKILL_ENGINE_WINDOW_SIZE (${v.SKILL_ENGINE_WINDOW_SIZE})`,
    );
  }
  if (v.SKILL_ENGINE_DEPRECATE_BELOW > v.SKILL_ENGINE_WARN_BELOW) {
    problems.push("SKILL_ENGINE_DEPRECATE_BELOW cannot exceed SKILL_ENGINE_WARN_BELOW: a skill is warned about before it is deprecated");
  }
  if (v.SKILL_ENGINE_EMBEDDER === "openai" && (!v.EMBEDDING_BASE_URL || !v.EMBEDDING_MODEL)) {
    problems.push(
      'SKILL_ENGINE_EMBEDDER=openai needs EMBEDDING_BASE_URL and EMBEDDING_MODEL (e.g. "http://127.0.0.1:8080" and "text-embedding-3-small")',
    );
  }
  if ((v.SKILL_ENGINE_TLS_CERT === undefined) !== (v.SKILL_ENGINE_TLS_KEY === undefined)) {
    problems.push(
      "SKILL_ENGINE_TLS_CERT and SKILL_ENGINE_TLS_KEY go together: set both (PEM certificate chain and private key) or neither",
    );
  }
  if (v.SKILL_ENGINE_CONSOLE === "on" && v.SKILL_ENGINE_METRICS === "off") {
    problems.push("SKILL_ENGINE_CONSOLE=on needs the HTTP port it is served on: leave SKILL_ENGINE_METRICS on (SKILL_ENGINE_METRICS_PORT)");
  }
  const httpAllowedHosts = (v.SKILL_ENGINE_HTTP_ALLOWED_HOSTS ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  for (const name of httpAllowedHosts.filter((name) => !HOST_NAME.test(name))) {
    problems.push(
      `SKILL_ENGINE_HTTP_ALLOWED_HOSTS: "${name}" is not a host name: list names without a scheme or port (e.g. "console.example.com,skill-engine")`,
    );
  }
  if ((v.SKILL_ENGINE_NATS_USER === undefined) !== (v.SKILL_ENGINE_NATS_PASSWORD === undefined)) {
    problems.push("SKILL_ENGINE_NATS_USER and SKILL_ENGINE_NATS_PASSWORD go together: set both or neither");
  }
  if ((v.SKILL_ENGINE_NATS_TLS_CERT === undefined) !== (v.SKILL_ENGINE_NATS_TLS_KEY === undefined)) {
    problems.push(
      "SKILL_ENGINE_NATS_TLS_CERT and SKILL_ENGINE_NATS_TLS_KEY go together (a client certificate and its key): set both or neither",
    );
  }
  if (v.SKILL_ENGINE_PIP_INDEX_URL !== undefined && v.SKILL_ENGINE_WHEELHOUSE !== undefined) {
    problems.push("SKILL_ENGINE_PIP_INDEX_URL and SKILL_ENGINE_WHEELHOUSE are two package sources: set one (docs/packages.md#sources)");
  }
  const maxQueuedRunsByAgent = agentNumbers("SKILL_ENGINE_MAX_QUEUED_RUNS_BY_AGENT", v.SKILL_ENGINE_MAX_QUEUED_RUNS_BY_AGENT, problems);
  const egress = egressSettings(v, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  const natsTls = v.SKILL_ENGINE_NATS_TLS_CA ?? v.SKILL_ENGINE_NATS_TLS_CERT;
  return {
    execution: v.SKILL_ENGINE_EXECUTION,
    nats: {
      servers: v.SKILL_ENGINE_NATS_URL.split(",").map((url) => url.trim()),
      credsFile: v.SKILL_ENGINE_NATS_CREDS === undefined ? undefined : path.resolve(v.SKILL_ENGINE_NATS_CREDS),
      token: v.SKILL_ENGINE_NATS_TOKEN,
      user: v.SKILL_ENGINE_NATS_USER,
      password: v.SKILL_ENGINE_NATS_PASSWORD,
      tls:
        natsTls === undefined
          ? undefined
          : {
              caFile: v.SKILL_ENGINE_NATS_TLS_CA === undefined ? undefined : path.resolve(v.SKILL_ENGINE_NATS_TLS_CA),
              certFile: v.SKILL_ENGINE_NATS_TLS_CERT === undefined ? undefined : path.resolve(v.SKILL_ENGINE_NATS_TLS_CERT),
              keyFile: v.SKILL_ENGINE_NATS_TLS_KEY === undefined ? undefined : path.resolve(v.SKILL_ENGINE_NATS_TLS_KEY),
            },
      subjectPrefix: v.SKILL_ENGINE_NATS_SUBJECT_PREFIX,
      heartbeatMs: v.SKILL_ENGINE_RUNNER_HEARTBEAT_MS,
      dispatchWaitMs: v.SKILL_ENGINE_DISPATCH_WAIT_MS,
    },
    runnerId:
      v.SKILL_ENGINE_RUNNER_ID ??
      (os
        .hostname()
        .replace(/[^A-Za-z0-9_-]/g, "-")
        .slice(0, 64) ||
        "runner"),
    embedder:
      v.SKILL_ENGINE_EMBEDDER === "openai"
        ? {
            kind: "openai",
            baseUrl: v.EMBEDDING_BASE_URL as string,
            model: v.EMBEDDING_MODEL as string,
            apiKey: v.EMBEDDING_API_KEY,
            dimensions: v.EMBEDDING_DIMENSIONS,
          }
        : v.SKILL_ENGINE_EMBEDDER === "minilm"
          ? { kind: "minilm", runtime: v.SKILL_ENGINE_MINILM_RUNTIME }
          : { kind: v.SKILL_ENGINE_EMBEDDER },
    qdrant: v.QDRANT_URL ? { url: v.QDRANT_URL, apiKey: v.QDRANT_API_KEY } : undefined,
    host: v.SKILL_ENGINE_HOST,
    port: v.SKILL_ENGINE_PORT,
    home,
    sandboxDir,
    secretsKeyFile,
    egress,
    image: v.SKILL_ENGINE_IMAGE,
    runtime: v.SKILL_ENGINE_RUNTIME,
    dockerHost: v.DOCKER_HOST,
    limits: {
      timeoutMs: v.SKILL_ENGINE_TIMEOUT_MS,
      memoryBytes: v.SKILL_ENGINE_MEMORY_MB * MiB,
      cpus: v.SKILL_ENGINE_CPUS,
      pidsLimit: v.SKILL_ENGINE_PIDS_LIMIT,
      outputLimitBytes: v.SKILL_ENGINE_OUTPUT_LIMIT_BYTES,
      tmpfsBytes: v.SKILL_ENGINE_TMPFS_MB * MiB,
      maxFileBytes: v.SKILL_ENGINE_MAX_FILE_MB * MiB,
      outputFiles: {
        spaceBytes: v.SKILL_ENGINE_OUTPUT_SPACE_MB * MiB,
        maxFiles: v.SKILL_ENGINE_OUTPUT_FILES_MAX,
        maxFileBytes: v.SKILL_ENGINE_OUTPUT_FILE_INLINE_MB * MiB,
        maxTotalBytes: v.SKILL_ENGINE_OUTPUT_INLINE_MB * MiB,
      },
    },
    inputFiles: { maxFiles: v.SKILL_ENGINE_INPUT_FILES_MAX, maxTotalBytes: v.SKILL_ENGINE_INPUT_FILES_MB * MiB },
    maxConcurrentRuns: v.SKILL_ENGINE_MAX_CONCURRENT_RUNS,
    maxQueuedRuns: v.SKILL_ENGINE_MAX_QUEUED_RUNS,
    maxQueuedRunsPerAgent:
      v.SKILL_ENGINE_MAX_QUEUED_RUNS_PER_AGENT ??
      // With no tokens every call is the one local agent: it has the whole queue to itself.
      (v.SKILL_ENGINE_TOKENS_FILE === undefined && v.SKILL_ENGINE_TOKENS === undefined
        ? v.SKILL_ENGINE_MAX_QUEUED_RUNS
        : Math.max(1, Math.floor(v.SKILL_ENGINE_MAX_QUEUED_RUNS / 4))),
    maxQueuedRunsByAgent,
    warmPoolSize: v.SKILL_ENGINE_POOL === "on" ? v.SKILL_ENGINE_POOL_SIZE : 0,
    warmIdleMs: v.SKILL_ENGINE_POOL_IDLE_SECONDS * 1000,
    environmentWarmPools: v.SKILL_ENGINE_POOL === "on" ? v.SKILL_ENGINE_ENV_WARM_POOLS : 0,
    environmentPoolSize: v.SKILL_ENGINE_ENV_POOL_SIZE,
    poolPauseAtRuns: v.SKILL_ENGINE_POOL_PAUSE_AT_RUNS,
    removalWorkers: v.SKILL_ENGINE_REMOVAL_WORKERS,
    maxAwaitingRemoval: v.SKILL_ENGINE_MAX_AWAITING_REMOVAL,
    telemetrySyncMs: v.SKILL_ENGINE_TELEMETRY_SYNC_MS,
    sqliteCacheKib: v.SKILL_ENGINE_SQLITE_CACHE_KIB,
    pythonPath: v.SKILL_ENGINE_PYTHON,
    healthPolicy: {
      degradeAfterConsecutiveFailures: v.SKILL_ENGINE_DEGRADE_AFTER_FAILURES,
      windowSize: v.SKILL_ENGINE_WINDOW_SIZE,
      minWindowSamples,
      warnBelow: v.SKILL_ENGINE_WARN_BELOW,
      deprecateBelow: v.SKILL_ENGINE_DEPRECATE_BELOW,
      retireAtFailures: v.SKILL_ENGINE_RETIRE_AT_FAILURES,
      retireAtFailuresWithLowUsage: v.SKILL_ENGINE_RETIRE_AT_FAILURES_LOW_USAGE,
      lowUsageBelow: v.SKILL_ENGINE_LOW_USAGE_BELOW,
      reportQuorum: v.SKILL_ENGINE_REPORT_QUORUM,
      ownRouteMinReports: v.SKILL_ENGINE_OWN_ROUTE_MIN_REPORTS,
    },
    contentGuard: v.SKILL_ENGINE_CONTENT_GUARD,
    retireSweepMinutes: v.SKILL_ENGINE_RETIRE_SWEEP_MINUTES,
    routing: {
      vectorWeight: v.SKILL_ENGINE_ROUTE_VECTOR_WEIGHT,
      minRelevance: v.SKILL_ENGINE_ROUTE_MIN_RELEVANCE,
      splitClauses: v.SKILL_ENGINE_ROUTE_SPLIT_CLAUSES === "on",
    },
    metricsPort: v.SKILL_ENGINE_METRICS === "on" ? v.SKILL_ENGINE_METRICS_PORT : undefined,
    console: v.SKILL_ENGINE_CONSOLE === "on",
    httpAllowedHosts: [...new Set(httpAllowedHosts.map((name) => name.toLowerCase()))],
    mcp:
      v.SKILL_ENGINE_MCP_PORT === undefined
        ? undefined
        : {
            host: v.SKILL_ENGINE_MCP_HOST,
            port: v.SKILL_ENGINE_MCP_PORT,
            tools: v.SKILL_ENGINE_MCP_TOOLS,
            pollMs: Math.round(v.SKILL_ENGINE_MCP_POLL_SECONDS * 1000),
          },
    auth: {
      tokensFile: v.SKILL_ENGINE_TOKENS_FILE === undefined ? undefined : path.resolve(v.SKILL_ENGINE_TOKENS_FILE),
      inlineTokens: v.SKILL_ENGINE_TOKENS,
    },
    tls:
      v.SKILL_ENGINE_TLS_CERT !== undefined && v.SKILL_ENGINE_TLS_KEY !== undefined
        ? { certFile: path.resolve(v.SKILL_ENGINE_TLS_CERT), keyFile: path.resolve(v.SKILL_ENGINE_TLS_KEY) }
        : undefined,
    engineProbeMs: v.SKILL_ENGINE_ENGINE_PROBE_MS,
    sandboxSweepMs: Math.round(v.SKILL_ENGINE_SANDBOX_SWEEP_SECONDS * 1000),
    shutdownGraceMs: Math.round(v.SKILL_ENGINE_SHUTDOWN_GRACE_SECONDS * 1000),
    composition: { maxDepth: v.SKILL_ENGINE_COMPOSITION_MAX_DEPTH, composedSkillsPerAgent: v.SKILL_ENGINE_COMPOSED_SKILLS_PER_AGENT },
    mandatorySkills: (v.SKILL_ENGINE_MANDATORY_SKILLS ?? "")
      .split(",")
      .map((name) => name.trim())
      .filter((name) => name !== ""),
    skillSources: {
      dirs: [...new Set(skillDirs)],
      watch: v.SKILL_ENGINE_SKILL_WATCH === "on",
      debounceMs: v.SKILL_ENGINE_SKILL_WATCH_DEBOUNCE_MS,
      rescanMs: Math.round(v.SKILL_ENGINE_SKILL_RESCAN_SECONDS * 1000),
      maxFileBytes: v.SKILL_ENGINE_SKILL_FILE_MAX_BYTES,
    },
    playbook: {
      minCopiedNgram: v.SKILL_ENGINE_LESSON_MIN_NGRAM,
      domains: v.SKILL_ENGINE_LESSON_DOMAINS
        ? [...new Set(v.SKILL_ENGINE_LESSON_DOMAINS.split(",").map((d) => d.trim()))]
        : DEFAULT_LESSON_DOMAINS,
      maxDistance: v.SKILL_ENGINE_PLAYBOOK_MAX_DISTANCE,
      contextLimit: v.SKILL_ENGINE_PLAYBOOK_LIMIT,
      creditWindowSeconds: v.SKILL_ENGINE_PLAYBOOK_CREDIT_WINDOW_SECONDS,
      pruneMinRetrievals: v.SKILL_ENGINE_LESSON_PRUNE_MIN_RETRIEVALS,
      pruneMaxDropFraction: v.SKILL_ENGINE_LESSON_PRUNE_MAX_DROP,
      maxLessons: v.SKILL_ENGINE_PLAYBOOK_MAX_LESSONS,
      stalePenaltyPerDay: v.SKILL_ENGINE_LESSON_STALE_PER_DAY,
      maxStalePenalty: v.SKILL_ENGINE_LESSON_MAX_STALE_PENALTY,
      pruneSweepMinutes: v.SKILL_ENGINE_LESSON_PRUNE_SWEEP_MINUTES,
    },
    learning: {
      candidateThreshold: v.SKILL_ENGINE_CANDIDATE_THRESHOLD,
      minSequenceLength: 3,
      maxSequenceLength: v.SKILL_ENGINE_PATTERN_MAX_LENGTH,
      maxCandidatesPerSession: v.SKILL_ENGINE_CANDIDATES_PER_SESSION,
      maxOpenCandidates: v.SKILL_ENGINE_OPEN_CANDIDATES_PER_AGENT,
      autoPromote: v.SKILL_ENGINE_AUTO_PROMOTE === "on",
      evolutionOverlap: v.SKILL_ENGINE_EVOLUTION_OVERLAP,
      implicitWeight: v.SKILL_ENGINE_IMPLICIT_WEIGHT,
      maxSessionCalls: v.SKILL_ENGINE_SESSION_MAX_CALLS,
      maxSessionBytes: v.SKILL_ENGINE_SESSION_MAX_BYTES,
      maxPatternsPerAgent: v.SKILL_ENGINE_PATTERNS_PER_AGENT,
      duplicates: { description: v.SKILL_ENGINE_DUPLICATE_DESCRIPTION, code: v.SKILL_ENGINE_DUPLICATE_CODE },
    },
    environments: {
      pipIndexUrl: v.SKILL_ENGINE_PIP_INDEX_URL,
      wheelhouse: v.SKILL_ENGINE_WHEELHOUSE === undefined ? undefined : path.resolve(v.SKILL_ENGINE_WHEELHOUSE),
      pipPython: v.SKILL_ENGINE_PIP_PYTHON,
      aptSourceList: v.SKILL_ENGINE_APT_SOURCES === undefined ? undefined : path.resolve(v.SKILL_ENGINE_APT_SOURCES),
      buildTimeoutMs: v.SKILL_ENGINE_ENV_BUILD_TIMEOUT_SECONDS * 1000,
      maxBytes: v.SKILL_ENGINE_ENV_MAX_BYTES,
      unusedGraceMs: Math.round(v.SKILL_ENGINE_ENV_UNUSED_GRACE_HOURS * 3600 * 1000),
    },
    logLevel: v.SKILL_ENGINE_LOG_LEVEL,
  };
}

/** dockerode connection options for a DOCKER_HOST value. */
export function dockerConnection(dockerHost: string): { socketPath: string } | { host: string; port: number } {
  if (dockerHost.startsWith("unix://")) return { socketPath: dockerHost.slice("unix://".length) };
  const url = new URL(dockerHost.replace(/^tcp:/, "http:"));
  return { host: url.hostname, port: Number(url.port) };
}

/** "agent=n,agent=n" (its shape checked by the schema) as a map; an agent named twice is a problem. */
function agentNumbers(variable: string, text: string | undefined, problems: string[]): ReadonlyMap<string, number> {
  const numbers = new Map<string, number>();
  for (const pair of (text ?? "").split(",").filter((part) => part.trim() !== "")) {
    const [agent = "", value = ""] = pair.split("=").map((part) => part.trim());
    if (numbers.has(agent)) problems.push(`${variable}: agent "${agent}" is named twice`);
    numbers.set(agent, Number(value));
  }
  return numbers;
}

function isSameOrInside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

/**
 * For entry points: the configuration, or undefined after telling the operator on stderr what is
 * wrong (prefixed with the tool's name). Anything but a ConfigError is a bug and is rethrown.
 */
export function loadConfigOrExplain(tool: string, env: NodeJS.ProcessEnv): SkillEngineConfig | undefined {
  try {
    return loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${tool}: ${error.message}\n`);
    return undefined;
  }
}
