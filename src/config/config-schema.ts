import { z } from "zod";

export const MiB = 1024 * 1024;

const integer = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/**
 * Every environment variable the service reads, with its range and default: the one schema
 * (the defaults are documented on the options, config-options.ts, and in docs/operations.md).
 */
export const environmentSchema = z.object({
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
  SKILL_ENGINE_OUTPUT_SPACE_MB: integer(1, 4096).default(64),
  SKILL_ENGINE_OUTPUT_FILES_MAX: integer(1, 10_000).default(256),
  SKILL_ENGINE_OUTPUT_FILE_INLINE_MB: integer(1, 256).default(16),
  SKILL_ENGINE_OUTPUT_INLINE_MB: integer(1, 256).default(32),
  SKILL_ENGINE_INPUT_FILES_MAX: integer(0, 1000).default(64),
  SKILL_ENGINE_INPUT_FILES_MB: integer(1, 256).default(16),
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
  SKILL_ENGINE_RETIRE_SWEEP_MINUTES: z.coerce.number().min(0).max(10_080).default(1),
  SKILL_ENGINE_POOL: z.enum(["on", "off"]).default("on"),
  SKILL_ENGINE_ROUTE_VECTOR_WEIGHT: z.coerce.number().min(0).max(1).default(0.7),
  SKILL_ENGINE_ROUTE_MIN_RELEVANCE: z.coerce.number().min(0).max(1).default(0.085),
  SKILL_ENGINE_ROUTE_SPLIT_CLAUSES: z.enum(["on", "off"]).default("on"),
  SKILL_ENGINE_POOL_SIZE: integer(1, 64).default(2),
  SKILL_ENGINE_POOL_IDLE_SECONDS: integer(5, 86_400).default(300),
  SKILL_ENGINE_ENV_WARM_POOLS: integer(0, 64).default(4),
  SKILL_ENGINE_ENV_POOL_SIZE: integer(1, 64).default(1),
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
  SKILL_ENGINE_MCP_PORT: integer(0, 65535).optional(),
  SKILL_ENGINE_MCP_HOST: z.string().min(1).default("127.0.0.1"),
  SKILL_ENGINE_MCP_TOOLS: z.enum(["meta", "skills", "both"]).default("meta"),
  SKILL_ENGINE_MCP_POLL_SECONDS: z.coerce.number().min(0.1).max(3600).default(5),
  SKILL_ENGINE_TOKENS_FILE: z.string().min(1).optional(),
  SKILL_ENGINE_SECRETS_KEY_FILE: z.string().min(1).optional(),
  SKILL_ENGINE_EGRESS_ALLOWED_HOSTS: z.string().optional(),
  SKILL_ENGINE_EGRESS_HOST_MAP: z.string().optional(),
  SKILL_ENGINE_EGRESS_MAX_CONNECTIONS: integer(1, 10_000).default(32),
  SKILL_ENGINE_EGRESS_MAX_BYTES: integer(1024, 4096 * MiB).default(16 * MiB),
  SKILL_ENGINE_EGRESS_CONNECT_TIMEOUT_MS: integer(100, 600_000).default(10_000),
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
  SKILL_ENGINE_PIP_INDEX_URL: z.url({ protocol: /^(https?|file)$/, error: "must be an http(s) or file URL of a PEP 503 index" }).optional(),
  SKILL_ENGINE_WHEELHOUSE: z.string().min(1).optional(),
  SKILL_ENGINE_PIP_PYTHON: z
    .string()
    .startsWith("/", "must be an absolute path to a python3 interpreter with pip")
    .default("/usr/bin/python3"),
  SKILL_ENGINE_APT_SOURCES: z.string().min(1).optional(),
  SKILL_ENGINE_ENV_BUILD_TIMEOUT_SECONDS: integer(1, 86_400).default(300),
  SKILL_ENGINE_ENV_MAX_BYTES: integer(1024, 64 * 1024 * MiB).default(512 * MiB),
  SKILL_ENGINE_ENV_UNUSED_GRACE_HOURS: z.coerce.number().min(0).max(8760).default(24),
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
