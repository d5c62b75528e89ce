import os from "node:os";
import path from "node:path";
import { z } from "zod";
import type { HealthPolicy } from "../control/index.js";
import type { SandboxLimits } from "../execution/index.js";
import type { DuplicateThresholds, LearningPolicy } from "../learning/index.js";
import { DEFAULT_LESSON_DOMAINS, type PlaybookPolicy } from "../playbook/index.js";

/** The service's whole configuration, read once at start-up by the composition root. */
export interface SkillEngineConfig {
  /** Interface the gRPC server binds. @default "127.0.0.1" (SKILL_ENGINE_HOST) */
  readonly host: string;
  /** gRPC port; 0 picks a free port and logs it. @default 50051 (SKILL_ENGINE_PORT) */
  readonly port: number;
  /** Registry and canonical store; never mounted into a container. @default "$XDG_DATA_HOME/skill-engine" or "~/.local/share/skill-engine" (SKILL_ENGINE_HOME) */
  readonly home: string;
  /** The only host path containers see (per-run directories). Safe to wipe at any time. @default "$XDG_CACHE_HOME/skill-engine/sandbox" or "~/.cache/skill-engine/sandbox" (SKILL_ENGINE_SANDBOX_DIR) */
  readonly sandboxDir: string;
  /** Sandbox image. @default "skill-engine-sandbox:latest" (SKILL_ENGINE_IMAGE) */
  readonly image: string;
  /** OCI runtime for sandboxes, e.g. "runsc" for gVisor. @default the engine's default (SKILL_ENGINE_RUNTIME) */
  readonly runtime: string | undefined;
  /** Docker engine address, "unix:///path" or "tcp://host:port". @default "unix:///var/run/docker.sock" (DOCKER_HOST) */
  readonly dockerHost: string;
  readonly limits: SandboxLimits;
  /** Sandbox runs at once. @default 4 (SKILL_ENGINE_MAX_CONCURRENT_RUNS) */
  readonly maxConcurrentRuns: number;
  /** Runs allowed to wait; past that, RESOURCE_EXHAUSTED. @default 64 (SKILL_ENGINE_MAX_QUEUED_RUNS) */
  readonly maxQueuedRuns: number;
  /**
   * Runs one agent may have waiting; past that, RESOURCE_EXHAUSTED to that agent only
   * (docs/security.md#fair-share-of-the-run-queue). @default a quarter of maxQueuedRuns, at least 1: 16
   * with its default; all of maxQueuedRuns when no tokens are configured (one local agent)
   * (SKILL_ENGINE_MAX_QUEUED_RUNS_PER_AGENT)
   */
  readonly maxQueuedRunsPerAgent: number;
  /**
   * Agents given their own number in place of maxQueuedRunsPerAgent (0: never waits).
   * @default none (SKILL_ENGINE_MAX_QUEUED_RUNS_BY_AGENT="batch-bot=2,ci=64")
   */
  readonly maxQueuedRunsByAgent: ReadonlyMap<string, number>;
  /**
   * Containers kept started, each waiting for exactly one job; 0 when the pool is off.
   * @default 2 (SKILL_ENGINE_POOL_SIZE), on unless SKILL_ENGINE_POOL=off
   */
  readonly warmPoolSize: number;
  /** An idle warm container older than this is replaced. @default 300 s (SKILL_ENGINE_POOL_IDLE_SECONDS) */
  readonly warmIdleMs: number;
  /**
   * The warm pool pauses its refills while this many runs execute, and resumes as they finish
   * (docs/performance.md#pool-refills-pause-under-load); 0 never pauses. @default 0 (SKILL_ENGINE_POOL_PAUSE_AT_RUNS)
   */
  readonly poolPauseAtRuns: number;
  /** Finished runs' containers removed at once in the background. @default 2 (SKILL_ENGINE_REMOVAL_WORKERS) */
  readonly removalWorkers: number;
  /**
   * Finished runs' containers waiting for removal at most; a run that finds the queue full waits for
   * room (docs/performance.md#container-removal). @default 32 (SKILL_ENGINE_MAX_AWAITING_REMOVAL)
   */
  readonly maxAwaitingRemoval: number;
  /**
   * An invocation's telemetry commit is flushed to disk at most this long after it, not before the
   * reply (docs/performance.md#telemetry-durability); 0 fsyncs each before the reply.
   * @default 1000 (SKILL_ENGINE_TELEMETRY_SYNC_MS)
   */
  readonly telemetrySyncMs: number;
  /**
   * Page cache of each of the service's SQLite connections on registry.db, in KiB: what SQLite may
   * hold in memory is five times this, whatever the file's size (docs/performance.md#memory-over-time).
   * @default 2048 (SKILL_ENGINE_SQLITE_CACHE_KIB)
   */
  readonly sqliteCacheKib: number;
  /** Debian's CPython, whose parser gates intake (never runs skill code). @default "/usr/bin/python3" (SKILL_ENGINE_PYTHON) */
  readonly pythonPath: string;
  /**
   * Lifecycle thresholds (docs/skill-lifecycle.md: consecutive failures, rolling window, retirement rule).
   * @default 3 failures → degraded (SKILL_ENGINE_DEGRADE_AFTER_FAILURES); window 20 (SKILL_ENGINE_WINDOW_SIZE),
   * judged once it holds 20 samples (SKILL_ENGINE_WINDOW_MIN_SAMPLES); warning below 0.4 (SKILL_ENGINE_WARN_BELOW);
   * deprecated below 0.3 (SKILL_ENGINE_DEPRECATE_BELOW); retire at failure_count ≥ 3 (SKILL_ENGINE_RETIRE_AT_FAILURES)
   * or ≥ 5 (SKILL_ENGINE_RETIRE_AT_FAILURES_LOW_USAGE) with usage_count < 10 (SKILL_ENGINE_LOW_USAGE_BELOW);
   * other agents' verdicts count toward the shared window once 3 of them agree (SKILL_ENGINE_REPORT_QUORUM),
   * and an agent's own routes drop a skill after 3 of its own reports (SKILL_ENGINE_OWN_ROUTE_MIN_REPORTS)
   */
  readonly healthPolicy: HealthPolicy;
  /**
   * "enforce" rejects code that trips a dangerous content-guard rule; "warn" reports it as a
   * warning instead (test suites that exercise the sandbox with hostile code). @default "enforce" (SKILL_ENGINE_CONTENT_GUARD)
   */
  readonly contentGuard: "enforce" | "warn";
  /** Minutes between automatic RetireDegradedSkills sweeps; 0 turns the sweep off. @default 0 (SKILL_ENGINE_RETIRE_SWEEP_MINUTES) */
  readonly retireSweepMinutes: number;
  /**
   * Routing embeddings: in-process all-MiniLM-L6-v2 (offline, the default), the in-process Universal
   * Sentence Encoder lite, or an OpenAI-compatible `/v1/embeddings` endpoint
   * (docs/routing.md#embedders). @default "minilm" (SKILL_ENGINE_EMBEDDER = "minilm" | "use-lite" |
   * "openai"; with "openai": EMBEDDING_BASE_URL, EMBEDDING_MODEL, EMBEDDING_API_KEY, EMBEDDING_DIMENSIONS).
   * MiniLM's runtime: ONNX Runtime's native kernels, or TensorFlow.js on WebAssembly; "native" falls
   * back to "wasm" with a warning where its addon cannot load. @default "native" (SKILL_ENGINE_MINILM_RUNTIME)
   */
  readonly embedder:
    | { readonly kind: "minilm"; readonly runtime: "native" | "wasm" }
    | { readonly kind: "use-lite" }
    | {
        readonly kind: "openai";
        readonly baseUrl: string;
        readonly model: string;
        readonly apiKey: string | undefined;
        readonly dimensions: number | undefined;
      };
  /**
   * How routing fuses and filters (docs/routing.md#fusion, #relevance, #multi-intent-queries):
   * the vector source's weight in fused mode (keywords get the rest), the default minimum relevance
   * of a routed skill (a request's `min_relevance` overrides it), and whether the clauses of a
   * multi-intent query are ranked apart.
   * @default { vectorWeight: 0.7, minRelevance: 0.01, splitClauses: true } (SKILL_ENGINE_ROUTE_VECTOR_WEIGHT,
   * SKILL_ENGINE_ROUTE_MIN_RELEVANCE, SKILL_ENGINE_ROUTE_SPLIT_CLAUSES = on | off)
   */
  readonly routing: { readonly vectorWeight: number; readonly minRelevance: number; readonly splitClauses: boolean };
  /** Qdrant for the vector index (scale-out); the embedded sqlite-vec index is kept alongside as the fallback. @default none (QDRANT_URL, QDRANT_API_KEY) */
  readonly qdrant: { readonly url: string; readonly apiKey: string | undefined } | undefined;
  /** Prometheus scrape port (GET /metrics, on `host`); undefined when metrics are off; 0 picks a free port. @default 9464 (SKILL_ENGINE_METRICS_PORT; SKILL_ENGINE_METRICS=off turns it off) */
  readonly metricsPort: number | undefined;
  /**
   * The operator console (docs/console.md), served under /console on the metrics port, behind the
   * same bearer tokens as the API (without tokens: the local agent, loopback only).
   * @default false (SKILL_ENGINE_CONSOLE = on | off; "on" needs the metrics port)
   */
  readonly console: boolean;
  /**
   * Host names the metrics port answers to (for /metrics and the console; the probes answer any) beside
   * `localhost` and IP addresses, which are always accepted: a request naming another host gets 421, and a
   * console form whose `Origin` names another host 403 (DNS rebinding: docs/security.md#dns-rebinding).
   * List the names the port is reached by, e.g. a proxy's public name or a compose service's name.
   * @default none (SKILL_ENGINE_HTTP_ALLOWED_HOSTS: comma-separated host names, without ports)
   */
  readonly httpAllowedHosts: readonly string[];
  /**
   * Where bearer tokens come from. With neither set, every call runs as the one local agent (with
   * the admin role). @default none (SKILL_ENGINE_TOKENS_FILE: a JSON file, re-read on SIGHUP;
   * SKILL_ENGINE_TOKENS: "agent[:admin]=token,..." inline)
   */
  readonly auth: { readonly tokensFile: string | undefined; readonly inlineTokens: string | undefined };
  /**
   * TLS for the gRPC port (PEM files); bearer tokens should not cross a network in the clear.
   * @default none: plaintext (SKILL_ENGINE_TLS_CERT and SKILL_ENGINE_TLS_KEY, both or neither)
   */
  readonly tls: { readonly certFile: string; readonly keyFile: string } | undefined;
  /** How often the Docker engine is probed for the health service. @default 15000 (SKILL_ENGINE_ENGINE_PROBE_MS) */
  readonly engineProbeMs: number;
  /**
   * How often the sandbox sweep removes this instance's untracked or leaked containers and run
   * directories (docs/security.md#container-lifecycle-and-orphans); it also runs whenever the engine
   * answers again after being away. 0 keeps only the latter. @default 60 s (SKILL_ENGINE_SANDBOX_SWEEP_SECONDS)
   */
  readonly sandboxSweepMs: number;
  /** On SIGTERM/SIGINT, how long runs in flight may finish before they are stopped. @default 15 s (SKILL_ENGINE_SHUTDOWN_GRACE_SECONDS) */
  readonly shutdownGraceMs: number;
  /**
   * Composed skills (docs/composition.md#limits): how deep compositions may nest, and how many live
   * composed skills one agent keeps before the least used is evicted.
   * @default depth 4 (SKILL_ENGINE_COMPOSITION_MAX_DEPTH), 50 per agent (SKILL_ENGINE_COMPOSED_SKILLS_PER_AGENT)
   */
  readonly composition: { readonly maxDepth: number; readonly composedSkillsPerAgent: number };
  /**
   * Skills that must be registered and ready (every dependency present) for the service to start
   * (docs/composition.md#mandatory-skills). @default none (SKILL_ENGINE_MANDATORY_SKILLS: comma-separated names)
   */
  readonly mandatorySkills: readonly string[];
  /**
   * Skill folders (docs/skill-sources.md#configuration): the directories scanned for `SKILL.md`
   * folders, in order (earlier ones shadow later ones); hot reload by a file watcher with a quiet
   * time, plus a periodic rescan; the largest file GetSkillFile returns; bundle limits.
   * @default no directories (SKILL_ENGINE_SKILL_DIRS: a path list, separated like PATH); watcher on
   * (SKILL_ENGINE_SKILL_WATCH = on | off) with 300 ms quiet time (SKILL_ENGINE_SKILL_WATCH_DEBOUNCE_MS);
   * rescan every 60 s, 0 = off (SKILL_ENGINE_SKILL_RESCAN_SECONDS); files up to 1 MiB
   * (SKILL_ENGINE_SKILL_FILE_MAX_BYTES)
   */
  readonly skillSources: {
    readonly dirs: readonly string[];
    readonly watch: boolean;
    readonly debounceMs: number;
    readonly rescanMs: number;
    readonly maxFileBytes: number;
  };
  /**
   * The playbook's rules (docs/playbook.md). @default guard 6-grams (SKILL_ENGINE_LESSON_MIN_NGRAM); the
   * taxonomy in docs/playbook.md#gates (SKILL_ENGINE_LESSON_DOMAINS, comma-separated); cosine distance below 0.45
   * (SKILL_ENGINE_PLAYBOOK_MAX_DISTANCE); 5 lessons a context (SKILL_ENGINE_PLAYBOOK_LIMIT); credit window 300 s
   * (SKILL_ENGINE_PLAYBOOK_CREDIT_WINDOW_SECONDS); prune at ≥ 5 retrievals (SKILL_ENGINE_LESSON_PRUNE_MIN_RETRIEVALS),
   * at most 0.25 of a playbook per call (SKILL_ENGINE_LESSON_PRUNE_MAX_DROP); 50 lessons per agent
   * (SKILL_ENGINE_PLAYBOOK_MAX_LESSONS); stale penalty 0.01 a day (SKILL_ENGINE_LESSON_STALE_PER_DAY) up to 0.3
   * (SKILL_ENGINE_LESSON_MAX_STALE_PENALTY); prune sweep every N minutes, 0 = off (SKILL_ENGINE_LESSON_PRUNE_SWEEP_MINUTES = 0)
   */
  readonly playbook: PlaybookPolicy & { readonly pruneSweepMinutes: number };
  /**
   * Learning from behaviour (docs/learning.md): a pattern becomes a candidate at 3 distinct sessions
   * (SKILL_ENGINE_CANDIDATE_THRESHOLD); windows of 3 to 6 calls (SKILL_ENGINE_PATTERN_MAX_LENGTH); at most 5 new
   * candidates a session (SKILL_ENGINE_CANDIDATES_PER_SESSION) and 100 open ones an agent
   * (SKILL_ENGINE_OPEN_CANDIDATES_PER_AGENT); auto-promotion off (SKILL_ENGINE_AUTO_PROMOTE = on |
   * off); evolution at 0.7 overlap (SKILL_ENGINE_EVOLUTION_OVERLAP); implicit signals weigh 0.5
   * (SKILL_ENGINE_IMPLICIT_WEIGHT); near-duplicates at description similarity ≥ 0.5875 (SKILL_ENGINE_DUPLICATE_DESCRIPTION)
   * and code similarity ≥ 0 (SKILL_ENGINE_DUPLICATE_CODE; both chosen by `npm run bench:duplicates`); a recorded session
   * holds at most 10,000 tool calls (SKILL_ENGINE_SESSION_MAX_CALLS) and 2 MiB of tool names and arguments
   * (SKILL_ENGINE_SESSION_MAX_BYTES); an agent keeps at most 50,000 patterns (SKILL_ENGINE_PATTERNS_PER_AGENT,
   * docs/learning.md#limits).
   * @default as listed
   */
  readonly learning: LearningPolicy & { readonly duplicates: DuplicateThresholds };
  /**
   * Where sandbox runs execute (docs/execution-hosts.md): `local`, in this process on the local
   * Docker engine, or `nats`, on runner processes (`npm run runner`) fed over a NATS bus.
   * @default "local" (SKILL_ENGINE_EXECUTION = local | nats)
   */
  readonly execution: "local" | "nats";
  /**
   * The NATS bus, for `SKILL_ENGINE_EXECUTION=nats` and for runners (docs/execution-hosts.md#the-bus).
   * @default url "nats://127.0.0.1:4222" (SKILL_ENGINE_NATS_URL, comma-separated for a cluster); no
   * credentials (SKILL_ENGINE_NATS_CREDS: a .creds file; or SKILL_ENGINE_NATS_TOKEN; or
   * SKILL_ENGINE_NATS_USER + SKILL_ENGINE_NATS_PASSWORD); no TLS (SKILL_ENGINE_NATS_TLS_CA,
   * SKILL_ENGINE_NATS_TLS_CERT + SKILL_ENGINE_NATS_TLS_KEY); subjects under "skillengine"
   * (SKILL_ENGINE_NATS_SUBJECT_PREFIX); a runner is heard every 1000 ms (SKILL_ENGINE_RUNNER_HEARTBEAT_MS)
   * and lost after 3 silent beats; a run waits up to 10000 ms for a runner with room (SKILL_ENGINE_DISPATCH_WAIT_MS)
   */
  readonly nats: NatsSettings;
  /**
   * This runner's name on the bus and in its containers' labels (runner mode only). Keep it stable
   * across restarts: a restarted runner removes what its previous life left on its engine.
   * @default the host name (SKILL_ENGINE_RUNNER_ID)
   */
  readonly runnerId: string;
  /** pino level. @default "info" (SKILL_ENGINE_LOG_LEVEL) */
  readonly logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
}

/** How to reach the NATS bus and how the control plane and runners talk on it. */
export interface NatsSettings {
  readonly servers: readonly string[];
  readonly credsFile: string | undefined;
  readonly token: string | undefined;
  readonly user: string | undefined;
  readonly password: string | undefined;
  readonly tls:
    { readonly caFile: string | undefined; readonly certFile: string | undefined; readonly keyFile: string | undefined } | undefined;
  readonly subjectPrefix: string;
  readonly heartbeatMs: number;
  readonly dispatchWaitMs: number;
}

/** Thrown at start-up when the environment holds an unusable value; lists every problem. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  - ${problems.join("\n  - ")}`);
    this.name = "ConfigError";
  }
}

const MiB = 1024 * 1024;

/** A host name: dot-separated labels of letters, digits, inner hyphens and underscores (compose service names), an optional final dot. */
const HOST_NAME =
  /^(?=.{1,253}\.?$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/;

const integer = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const schema = z.object({
  SKILL_ENGINE_HOST: z.string().min(1).default("127.0.0.1"),
  SKILL_ENGINE_PORT: integer(0, 65535).default(50051),
  SKILL_ENGINE_HOME: z.string().min(1).optional(),
  SKILL_ENGINE_SANDBOX_DIR: z.string().min(1).optional(),
  SKILL_ENGINE_IMAGE: z
    .string()
    .regex(/^[\w][\w./:@-]*$/, "must be a Docker image reference")
    .default("skill-engine-sandbox:latest"),
  SKILL_ENGINE_RUNTIME: z
    .string()
    .regex(/^[\w.-]+$/, "must be a runtime name such as runc or runsc")
    .optional(),
  DOCKER_HOST: z
    .string()
    .regex(/^(unix:\/\/\/.+|tcp:\/\/[^/:]+:\d+)$/, 'must be "unix:///path/to/docker.sock" or "tcp://host:port"')
    .default("unix:///var/run/docker.sock"),
  SKILL_ENGINE_TIMEOUT_MS: integer(100, 3_600_000).default(10_000),
  SKILL_ENGINE_MEMORY_MB: integer(16, 65_536).default(256),
  SKILL_ENGINE_CPUS: z.coerce.number().min(0.01).max(64).default(1),
  SKILL_ENGINE_PIDS_LIMIT: integer(8, 4096).default(64),
  SKILL_ENGINE_OUTPUT_LIMIT_BYTES: integer(1024, 64 * MiB).default(256 * 1024),
  SKILL_ENGINE_TMPFS_MB: integer(1, 4096).default(64),
  SKILL_ENGINE_MAX_FILE_MB: integer(1, 4096).default(16),
  SKILL_ENGINE_MAX_CONCURRENT_RUNS: integer(1, 256).default(4),
  SKILL_ENGINE_MAX_QUEUED_RUNS: integer(0, 100_000).default(64),
  SKILL_ENGINE_MAX_QUEUED_RUNS_PER_AGENT: integer(1, 100_000).optional(),
  SKILL_ENGINE_MAX_QUEUED_RUNS_BY_AGENT: z
    .string()
    .regex(
      /^\s*[A-Za-z0-9][A-Za-z0-9._@-]{0,63}\s*=\s*\d{1,6}\s*(,\s*[A-Za-z0-9][A-Za-z0-9._@-]{0,63}\s*=\s*\d{1,6}\s*)*,?\s*$/,
      'must be comma-separated "agent=runs" pairs, e.g. "batch-bot=2,ci=64"',
    )
    .optional(),
  SKILL_ENGINE_POOL_PAUSE_AT_RUNS: integer(0, 256).default(0),
  SKILL_ENGINE_REMOVAL_WORKERS: integer(1, 64).default(2),
  SKILL_ENGINE_MAX_AWAITING_REMOVAL: integer(1, 10_000).default(32),
  SKILL_ENGINE_TELEMETRY_SYNC_MS: integer(0, 60_000).default(1000),
  SKILL_ENGINE_SQLITE_CACHE_KIB: integer(64, 1_048_576).default(2048),
  SKILL_ENGINE_PYTHON: z.string().startsWith("/", "must be an absolute path to a python3 interpreter").default("/usr/bin/python3"),
  SKILL_ENGINE_DEGRADE_AFTER_FAILURES: integer(1, 1000).default(3),
  SKILL_ENGINE_WINDOW_SIZE: integer(1, 10_000).default(20),
  SKILL_ENGINE_WINDOW_MIN_SAMPLES: integer(1, 10_000).optional(),
  SKILL_ENGINE_WARN_BELOW: z.coerce.number().min(0).max(1).default(0.4),
  SKILL_ENGINE_DEPRECATE_BELOW: z.coerce.number().min(0).max(1).default(0.3),
  SKILL_ENGINE_RETIRE_AT_FAILURES: integer(1, 1000).default(3),
  SKILL_ENGINE_RETIRE_AT_FAILURES_LOW_USAGE: integer(1, 1000).default(5),
  SKILL_ENGINE_LOW_USAGE_BELOW: integer(0, 1_000_000).default(10),
  SKILL_ENGINE_REPORT_QUORUM: integer(1, 1000).default(3),
  SKILL_ENGINE_OWN_ROUTE_MIN_REPORTS: integer(1, 10_000).default(3),
  SKILL_ENGINE_CONTENT_GUARD: z.enum(["enforce", "warn"]).default("enforce"),
  SKILL_ENGINE_RETIRE_SWEEP_MINUTES: z.coerce.number().min(0).max(10_080).default(0),
  SKILL_ENGINE_POOL: z.enum(["on", "off"]).default("on"),
  SKILL_ENGINE_ROUTE_VECTOR_WEIGHT: z.coerce.number().min(0).max(1).default(0.7),
  SKILL_ENGINE_ROUTE_MIN_RELEVANCE: z.coerce.number().min(0).max(1).default(0.01),
  SKILL_ENGINE_ROUTE_SPLIT_CLAUSES: z.enum(["on", "off"]).default("on"),
  SKILL_ENGINE_POOL_SIZE: integer(1, 64).default(2),
  SKILL_ENGINE_POOL_IDLE_SECONDS: integer(5, 86_400).default(300),
  SKILL_ENGINE_EMBEDDER: z.enum(["minilm", "use-lite", "openai"]).default("minilm"),
  SKILL_ENGINE_MINILM_RUNTIME: z.enum(["native", "wasm"]).default("native"),
  EMBEDDING_BASE_URL: z.url().optional(),
  EMBEDDING_MODEL: z.string().min(1).optional(),
  EMBEDDING_API_KEY: z.string().min(1).optional(),
  EMBEDDING_DIMENSIONS: integer(1, 65_536).optional(),
  QDRANT_URL: z.url().optional(),
  QDRANT_API_KEY: z.string().min(1).optional(),
  SKILL_ENGINE_METRICS: z.enum(["on", "off"]).default("on"),
  SKILL_ENGINE_METRICS_PORT: integer(0, 65535).default(9464),
  SKILL_ENGINE_CONSOLE: z.enum(["on", "off"]).default("off"),
  SKILL_ENGINE_HTTP_ALLOWED_HOSTS: z.string().optional(),
  SKILL_ENGINE_TOKENS_FILE: z.string().min(1).optional(),
  SKILL_ENGINE_TOKENS: z.string().min(1).optional(),
  SKILL_ENGINE_TLS_CERT: z.string().min(1).optional(),
  SKILL_ENGINE_TLS_KEY: z.string().min(1).optional(),
  SKILL_ENGINE_ENGINE_PROBE_MS: integer(100, 3_600_000).default(15_000),
  SKILL_ENGINE_SANDBOX_SWEEP_SECONDS: z.coerce.number().min(0).max(86_400).default(60),
  SKILL_ENGINE_SHUTDOWN_GRACE_SECONDS: z.coerce.number().min(0).max(3600).default(15),
  SKILL_ENGINE_COMPOSITION_MAX_DEPTH: integer(1, 32).default(4),
  SKILL_ENGINE_COMPOSED_SKILLS_PER_AGENT: integer(1, 100_000).default(50),
  SKILL_ENGINE_MANDATORY_SKILLS: z
    .string()
    .regex(/^\s*[A-Za-z_][A-Za-z0-9_-]{0,63}\s*(,\s*[A-Za-z_][A-Za-z0-9_-]{0,63}\s*)*,?\s*$/, "must be comma-separated skill names")
    .optional(),
  SKILL_ENGINE_SKILL_DIRS: z.string().optional(),
  SKILL_ENGINE_SKILL_WATCH: z.enum(["on", "off"]).default("on"),
  SKILL_ENGINE_SKILL_WATCH_DEBOUNCE_MS: integer(0, 60_000).default(300),
  SKILL_ENGINE_SKILL_RESCAN_SECONDS: z.coerce.number().min(0).max(86_400).default(60),
  SKILL_ENGINE_SKILL_FILE_MAX_BYTES: integer(1, 16 * 1024 * 1024).default(1024 * 1024),
  SKILL_ENGINE_LESSON_MIN_NGRAM: integer(2, 100).default(6),
  SKILL_ENGINE_LESSON_DOMAINS: z
    .string()
    .regex(/^\s*[a-z0-9][a-z0-9_-]*(\s*,\s*[a-z0-9][a-z0-9_-]*)*\s*$/, "must be comma-separated lowercase domain names")
    .optional(),
  SKILL_ENGINE_PLAYBOOK_MAX_DISTANCE: z.coerce.number().gt(0).max(2).default(0.45),
  SKILL_ENGINE_PLAYBOOK_LIMIT: integer(1, 50).default(5),
  SKILL_ENGINE_PLAYBOOK_CREDIT_WINDOW_SECONDS: integer(1, 86_400).default(300),
  SKILL_ENGINE_LESSON_PRUNE_MIN_RETRIEVALS: integer(1, 1_000_000).default(5),
  SKILL_ENGINE_LESSON_PRUNE_MAX_DROP: z.coerce.number().gt(0).max(1).default(0.25),
  SKILL_ENGINE_PLAYBOOK_MAX_LESSONS: integer(1, 10_000).default(50),
  SKILL_ENGINE_LESSON_STALE_PER_DAY: z.coerce.number().min(0).max(1).default(0.01),
  SKILL_ENGINE_LESSON_MAX_STALE_PENALTY: z.coerce.number().min(0).max(10).default(0.3),
  SKILL_ENGINE_LESSON_PRUNE_SWEEP_MINUTES: z.coerce.number().min(0).max(10_080).default(0),
  SKILL_ENGINE_CANDIDATE_THRESHOLD: integer(2, 1_000).default(3),
  SKILL_ENGINE_PATTERN_MAX_LENGTH: integer(3, 32).default(6),
  SKILL_ENGINE_CANDIDATES_PER_SESSION: integer(1, 100).default(5),
  SKILL_ENGINE_OPEN_CANDIDATES_PER_AGENT: integer(1, 100_000).default(100),
  SKILL_ENGINE_AUTO_PROMOTE: z.enum(["on", "off"]).default("off"),
  SKILL_ENGINE_EVOLUTION_OVERLAP: z.coerce.number().gt(0).max(1).default(0.7),
  SKILL_ENGINE_IMPLICIT_WEIGHT: z.coerce.number().min(0).max(1).default(0.5),
  SKILL_ENGINE_SESSION_MAX_CALLS: integer(1, 100_000).default(10_000),
  SKILL_ENGINE_SESSION_MAX_BYTES: integer(1024, 64 * 1024 * 1024).default(2 * 1024 * 1024),
  SKILL_ENGINE_PATTERNS_PER_AGENT: integer(1, 100_000_000).default(50_000),
  SKILL_ENGINE_DUPLICATE_DESCRIPTION: z.coerce.number().min(-1).max(1.01).default(0.5875),
  SKILL_ENGINE_DUPLICATE_CODE: z.coerce.number().min(0).max(1.01).default(0),
  SKILL_ENGINE_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  SKILL_ENGINE_EXECUTION: z.enum(["local", "nats"]).default("local"),
  SKILL_ENGINE_NATS_URL: z
    .string()
    .regex(
      /^\s*(nats|tls):\/\/[^\s,]+(\s*,\s*(nats|tls):\/\/[^\s,]+)*\s*$/,
      'must be "nats://host:port" (or tls://), comma-separated for a cluster',
    )
    .default("nats://127.0.0.1:4222"),
  SKILL_ENGINE_NATS_CREDS: z.string().min(1).optional(),
  SKILL_ENGINE_NATS_TOKEN: z.string().min(1).optional(),
  SKILL_ENGINE_NATS_USER: z.string().min(1).optional(),
  SKILL_ENGINE_NATS_PASSWORD: z.string().min(1).optional(),
  SKILL_ENGINE_NATS_TLS_CA: z.string().min(1).optional(),
  SKILL_ENGINE_NATS_TLS_CERT: z.string().min(1).optional(),
  SKILL_ENGINE_NATS_TLS_KEY: z.string().min(1).optional(),
  SKILL_ENGINE_NATS_SUBJECT_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, "must be dot-separated tokens of letters, digits, _ and -")
    .default("skillengine"),
  SKILL_ENGINE_RUNNER_HEARTBEAT_MS: integer(100, 60_000).default(1000),
  SKILL_ENGINE_DISPATCH_WAIT_MS: integer(0, 3_600_000).default(10_000),
  SKILL_ENGINE_RUNNER_ID: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1 to 64 letters, digits, _ or -")
    .optional(),
});

/** Reads and validates the configuration; the environment is passed in so tests can set it. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): SkillEngineConfig {
  // Empty variables mean "unset", as in most shells' `VAR= command` habit.
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ""));
  const parsed = schema.safeParse(present);
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
  const maxQueuedRunsByAgent = agentNumbers("SKILL_ENGINE_MAX_QUEUED_RUNS_BY_AGENT", v.SKILL_ENGINE_MAX_QUEUED_RUNS_BY_AGENT, problems);
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
    },
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
