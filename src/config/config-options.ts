import type { HealthPolicy } from "../control/index.js";
import type { EnvironmentSettings } from "../environments/index.js";
import type { EgressLimits, HostPattern, MappedAddress } from "../egress/index.js";
import type { SandboxLimits } from "../execution/index.js";
import type { DuplicateThresholds, LearningPolicy } from "../learning/index.js";
import type { PlaybookPolicy } from "../playbook/index.js";

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
  /**
   * The key that encrypts the secrets store (docs/security.md#secrets): 32 random bytes, mode 0600, created on first
   * start when neither it nor the store exists; never inside the sandbox dir.
   * @default "$SKILL_ENGINE_HOME/secrets.key" (SKILL_ENGINE_SECRETS_KEY_FILE)
   */
  readonly secretsKeyFile: string;
  /**
   * Egress to declared hosts (docs/security.md#egress): the operator's policy, the hosts any skill may declare
   * in `network_allow` (@default none: no skill may declare a host; SKILL_ENGINE_EGRESS_ALLOWED_HOSTS,
   * comma-separated `host`, `host:port`, `*.domain` or IP literals); names mapped to addresses, the only way a
   * run reaches a loopback or private address (@default none; SKILL_ENGINE_EGRESS_HOST_MAP, comma-separated
   * `host=address[:port]`); and each run's limits: 32 connections (SKILL_ENGINE_EGRESS_MAX_CONNECTIONS), 16 MiB
   * moved in all (SKILL_ENGINE_EGRESS_MAX_BYTES), 10000 ms to open a connection (SKILL_ENGINE_EGRESS_CONNECT_TIMEOUT_MS).
   */
  readonly egress: {
    readonly allowedHosts: readonly HostPattern[];
    readonly hostMap: ReadonlyMap<string, MappedAddress>;
    readonly limits: EgressLimits;
  };
  /** Sandbox image. @default "skill-engine-sandbox:latest" (SKILL_ENGINE_IMAGE) */
  readonly image: string;
  /** OCI runtime for sandboxes, e.g. "runsc" for gVisor. @default the engine's default (SKILL_ENGINE_RUNTIME) */
  readonly runtime: string | undefined;
  /** Docker engine address, "unix:///path" or "tcp://host:port". @default "unix:///var/run/docker.sock" (DOCKER_HOST) */
  readonly dockerHost: string;
  readonly limits: SandboxLimits;
  /**
   * Files an invocation or a registration's test run may hand a run (docs/files.md#input-files): at
   * most `maxFiles` (@default 64, SKILL_ENGINE_INPUT_FILES_MAX) of together `maxTotalBytes`
   * (@default 16 MiB, SKILL_ENGINE_INPUT_FILES_MB).
   */
  readonly inputFiles: { readonly maxFiles: number; readonly maxTotalBytes: number };
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
   * Environments of packages given a warm pool of their own at once, the least recently used removed
   * first (docs/packages.md#warm-containers-of-an-environment); 0 when off, and when the warm pool is off.
   * @default 4 (SKILL_ENGINE_ENV_WARM_POOLS)
   */
  readonly environmentWarmPools: number;
  /** Containers each environment's warm pool keeps waiting. @default 1 (SKILL_ENGINE_ENV_POOL_SIZE) */
  readonly environmentPoolSize: number;
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
  /** Minutes between automatic RetireDegradedSkills sweeps (docs/skill-lifecycle.md#retirement-rule); 0 turns the sweep off. @default 1 (SKILL_ENGINE_RETIRE_SWEEP_MINUTES) */
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
   * of an answer's best skill, below which a route answers nothing with `no_fit` (a request's
   * `min_relevance` overrides it; docs/routing.md#no-skill-fits), and whether the clauses of a
   * multi-intent query are ranked apart.
   * @default { vectorWeight: 0.7, minRelevance: 0.085, splitClauses: true } (SKILL_ENGINE_ROUTE_VECTOR_WEIGHT,
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
   * The MCP door's Streamable HTTP endpoint, `/mcp` (docs/mcp.md): off unless a port is set (0 picks a free
   * one); on `host` (@default "127.0.0.1", SKILL_ENGINE_MCP_HOST), with the gRPC port's TLS files and tokens.
   * `tools`: the meta tools only, a tool per visible skill, or both (@default "meta", SKILL_ENGINE_MCP_TOOLS =
   * meta | skills | both). Each session looks for changes of the caller's skills every `pollMs` to send
   * list_changed (@default 5 s, SKILL_ENGINE_MCP_POLL_SECONDS).
   * @default off (SKILL_ENGINE_MCP_PORT)
   */
  readonly mcp:
    { readonly host: string; readonly port: number; readonly tools: "meta" | "skills" | "both"; readonly pollMs: number } | undefined;
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
   * Packages for skills (docs/packages.md): where Python packages come from, the Python whose pip
   * installs them, Debian packages' apt sources, and each environment's limits.
   * @default no package source (SKILL_ENGINE_PIP_INDEX_URL: a PEP 503 index URL, or SKILL_ENGINE_WHEELHOUSE: a
   * folder of wheels; not both); pip of "/usr/bin/python3" (SKILL_ENGINE_PIP_PYTHON); the host's apt sources
   * (SKILL_ENGINE_APT_SOURCES: a sources.list of its own); 300 s a build (SKILL_ENGINE_ENV_BUILD_TIMEOUT_SECONDS);
   * 512 MiB an environment (SKILL_ENGINE_ENV_MAX_BYTES); unused environments kept 24 h
   * (SKILL_ENGINE_ENV_UNUSED_GRACE_HOURS)
   */
  readonly environments: EnvironmentSettings;
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
