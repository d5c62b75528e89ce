import { mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type ChannelCredentials, credentials, Metadata, type ServiceError } from "@grpc/grpc-js";
import Docker from "dockerode";
import pino from "pino";
import { instanceTagOf, type SkillEngineApp, startSkillEngine } from "../../src/app.js";
import type { UnaryMethod } from "../../src/cli/skillctl/client.js";
import { loadConfig, type SkillEngineConfig } from "../../src/config/index.js";
import { LABEL_INSTANCE, LABEL_MANAGED, LABEL_RUN_ID } from "../../src/execution/index.js";
import { eventually } from "./poll.js";
import { type InvokeSkillResponse } from "../../src/gen/skillengine/v1/execution.js";
import { type RegisterSkillRequest, type RegisterSkillResponse } from "../../src/gen/skillengine/v1/registration.js";
import { SkillEngineClient } from "../../src/gen/skillengine/v1/skill_engine.js";
import { type GetSkillResponse, type ListSkillsResponse } from "../../src/gen/skillengine/v1/skills.js";

export const docker = new Docker({ socketPath: "/var/run/docker.sock" });

/** Promise-returning wrappers over the generated client, with an optional deadline. */
export interface TestClient {
  register(request: Partial<RegisterSkillRequest> & { name: string; code: string }, deadlineMs?: number): Promise<RegisterSkillResponse>;
  invoke(name: string, payload?: string, deadlineMs?: number, routeId?: string): Promise<InvokeSkillResponse>;
  get(name: string): Promise<GetSkillResponse>;
  list(includeInactive?: boolean): Promise<ListSkillsResponse>;
  /** Any other RPC: `client.call(client.raw.patchSkill, {...})`. */
  call<Req, Res>(method: UnaryMethod<Req, Res>, request: Req, deadlineMs?: number): Promise<Res>;
  raw: SkillEngineClient;
  close(): void;
}

export interface TestEngine {
  readonly app: SkillEngineApp;
  readonly client: TestClient;
  readonly config: SkillEngineConfig;
  readonly home: string;
  readonly sandboxDir: string;
  readonly instanceTag: string;
  /** Closes client and app, keeping the directories (for restart tests). */
  stop(): Promise<void>;
  /** Stops and deletes the directories. */
  dispose(): Promise<void>;
}

export interface TestEngineOptions {
  /** Extra environment (limits etc.). */
  env?: Record<string, string>;
  /** Reuse directories of an earlier engine (restart tests). */
  dirs?: { root: string; home: string; sandboxDir: string };
  /** The playbook's clock (credit windows), so tests move time instead of sleeping. */
  clock?: () => number;
  /** Receives the service's JSON log lines (at SKILL_ENGINE_LOG_LEVEL, which then defaults to info). */
  logs?: { write(line: string): void };
}

/** A real service on 127.0.0.1:0 with its own temp home and sandbox dir, and a real client. */
export async function startTestEngine(options: TestEngineOptions = {}): Promise<TestEngine> {
  const dirs = options.dirs ?? (await makeDirs());
  const config = loadConfig({
    SKILL_ENGINE_HOST: "127.0.0.1",
    SKILL_ENGINE_PORT: "0",
    SKILL_ENGINE_HOME: dirs.home,
    SKILL_ENGINE_SANDBOX_DIR: dirs.sandboxDir,
    SKILL_ENGINE_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? (options.logs ? "info" : "silent"),
    // Most suites exercise the cold path and count containers; warm-pool suites turn it on.
    SKILL_ENGINE_POOL: "off",
    // Many engines run at once in the suite: each gets its own free metrics port.
    SKILL_ENGINE_METRICS_PORT: "0",
    // Disposing an engine stops its runs at once, as before graceful shutdown existed; suites
    // about the drain set a grace of their own.
    SKILL_ENGINE_SHUTDOWN_GRACE_SECONDS: "0",
    // The retirement sweep runs every minute by default; suites that make skills fail and then look
    // at them would race it. Suites about the sweep set it (an empty value means the default).
    SKILL_ENGINE_RETIRE_SWEEP_MINUTES: "0",
    ...options.env,
  });
  const logger = options.logs ? pino({ level: config.logLevel }, options.logs) : pino({ level: config.logLevel });
  const app = await startSkillEngine(config, logger, options.clock ? { clock: options.clock } : {});
  const client = connect(app.port);
  const stop = async (): Promise<void> => {
    client.close();
    await app.close();
  };
  return {
    app,
    client,
    config,
    home: dirs.home,
    sandboxDir: dirs.sandboxDir,
    instanceTag: instanceTagOf(dirs.home),
    stop,
    async dispose() {
      await stop();
      await rm(dirs.root, { recursive: true, force: true });
    },
  };
}

export async function makeDirs(): Promise<{ root: string; home: string; sandboxDir: string }> {
  const root = await mkdtemp(path.join(os.tmpdir(), "skill-engine-test-"));
  return { root, home: path.join(root, "home"), sandboxDir: path.join(root, "sandbox") };
}

/** A unary method of the generated client, as skillctl calls it too. */
export type { UnaryMethod } from "../../src/cli/skillctl/client.js";

/**
 * A client of the engine on `port`; with `token`, every call carries `authorization: Bearer <token>`;
 * plaintext unless other channel credentials are given (TLS tests).
 */
export function connect(
  port: number,
  token?: string,
  channelCredentials: ChannelCredentials = credentials.createInsecure(),
  /** More metadata on every call (e.g. `x-user-id`). */
  extraMetadata: Record<string, string> = {},
): TestClient {
  // A run may hand back 32 MiB of files inline (docs/files.md#message-sizes): past grpc-js's 4 MiB default.
  // A 16 MiB flow-control window, as skillctl's: HTTP/2's 64 KiB paused every large answer each 64 KiB.
  const raw = new SkillEngineClient(`127.0.0.1:${port}`, channelCredentials, {
    "grpc.max_receive_message_length": 64 * 1024 * 1024,
    "grpc-node.flow_control_window": 16 * 1024 * 1024,
  });
  const metadata = (): Metadata => {
    const m = new Metadata();
    if (token !== undefined) m.set("authorization", `Bearer ${token}`);
    for (const [key, value] of Object.entries(extraMetadata)) m.set(key, value);
    return m;
  };
  const call = <Req, Res>(method: UnaryMethod<Req, Res>, request: Req, deadlineMs = 60_000): Promise<Res> =>
    new Promise<Res>((resolve, reject) => {
      method.call(raw, request, metadata(), { deadline: Date.now() + deadlineMs }, (error, response) =>
        error ? reject(error) : resolve(response),
      );
    });
  return {
    raw,
    call,
    register: (request, ms) =>
      call<RegisterSkillRequest, RegisterSkillResponse>(
        raw.registerSkill,
        {
          description: "a test skill",
          parametersSchema: '{"type":"object"}',
          testPayload: "{}",
          exampleQueries: [],
          requirements: [],
          systemPackages: [],
          testFiles: [],
          secrets: [],
          networkAllow: [],
          visibility: 0,
          dependsOn: [],
          system: false,
          onDuplicate: 0,
          parametersSchemaJson: undefined,
          testPayloadJson: undefined,
          ...request,
        },
        ms,
      ),
    invoke: (name, payload = "{}", ms, routeId = "") =>
      call(raw.invokeSkill, { name, payload, payloadJson: undefined, routeId, files: [] }, ms),
    get: (name) => call(raw.getSkill, { name }),
    list: (includeInactive = false) => call(raw.listSkills, { includeInactive, owner: "" }),
    close: () => raw.close(),
  };
}

/** Containers of one service instance that still exist, asked of the engine directly (the shared one unless told). */
export async function containersOf(instanceTag: string, engine: Docker = docker): Promise<Docker.ContainerInfo[]> {
  return engine.listContainers({
    all: true,
    filters: { label: [`${LABEL_MANAGED}=true`, `${LABEL_INSTANCE}=${instanceTag}`] },
  });
}

/**
 * Starts `call` and waits until a container of `instanceTag` that was not there before is running:
 * the call's run is then surely in flight. Counting containers is not enough, since a finished
 * run's container (a registration's test run) is removed in the background, moments after its
 * answer (docs/performance.md#container-removal).
 */
export async function whileItsContainerRuns<T>(
  instanceTag: string,
  call: () => Promise<T>,
  engine: Docker = docker,
): Promise<{ call: Promise<T>; runId: string }> {
  const before = new Set((await containersOf(instanceTag, engine)).map((c) => c.Id));
  const started = call();
  started.catch(() => undefined); // observed by the caller; keeps an early failure from being unhandled
  const runId = await eventually(
    "the call's container to run",
    async () => (await containersOf(instanceTag, engine)).find((c) => !before.has(c.Id) && c.State === "running")?.Labels[LABEL_RUN_ID],
    { intervalMs: 25 },
  );
  return { call: started, runId };
}

/**
 * Waits until no container and no run directory of `engine`'s instance is left: finished runs'
 * containers are removed in the background, moments after their answer
 * (docs/performance.md#container-removal). For engines with the warm pool off.
 */
export async function runsCleanedUp(engine: TestEngine): Promise<void> {
  await eventually("finished runs' containers and run directories to be removed", async () => {
    const containers = await containersOf(engine.instanceTag);
    const runDirectories = await readdir(path.join(engine.sandboxDir, "runs")).catch(() => []);
    return containers.length === 0 && runDirectories.length === 0 ? true : undefined;
  });
}

/** The error a rejected call produced, for assertions on code and details. */
export async function rpcError(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (error) {
    return error as ServiceError;
  }
  throw new Error("expected the call to fail, but it succeeded");
}

/** The engine's own /metrics, as Prometheus text. */
async function metricsText(engine: TestEngine): Promise<string> {
  const port = engine.app.metricsPort;
  if (port === undefined) throw new Error("this test engine serves no metrics (SKILL_ENGINE_METRICS=off)");
  return (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
}

/** Every sample of one metric on the engine's own /metrics: its labels and value. */
export async function metricSamples(engine: TestEngine, metric: string): Promise<Array<{ labels: Record<string, string>; value: number }>> {
  return samples(await metricsText(engine), metric);
}

/** Every sample of one metric: its labels and value. */
export function samples(text: string, metric: string): Array<{ labels: Record<string, string>; value: number }> {
  return text
    .split("\n")
    .filter((line) => line.startsWith(`${metric}{`) || line.startsWith(`${metric} `))
    .map((line) => ({
      labels: Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1] as string, m[2] as string])),
      value: Number(line.slice(line.lastIndexOf(" ") + 1)),
    }));
}

/** Sandbox runs of one purpose so far, by path, as the engine's own /metrics counts them. */
export async function runsByPath(engine: TestEngine, purpose: "invoke" | "test" = "invoke"): Promise<{ warm: number; cold: number }> {
  const counts = { warm: 0, cold: 0 };
  for (const { labels, value } of samples(await metricsText(engine), "skill_engine_sandbox_runs_total")) {
    if (labels.purpose === purpose && (labels.path === "warm" || labels.path === "cold")) counts[labels.path] += value;
  }
  return counts;
}

/** Runs waiting for a slot right now, as the engine's /metrics reports them. */
export async function queueDepth(engine: TestEngine): Promise<number> {
  return samples(await metricsText(engine), "skill_engine_run_queue_depth")[0]?.value ?? 0;
}

/** Containers waiting in the engine's warm pool right now, as its /metrics reports them. */
export async function warmIdle(engine: TestEngine): Promise<number> {
  return samples(await metricsText(engine), "skill_engine_warm_pool_idle")[0]?.value ?? 0;
}

/** Runs the infrastructure cut short so far, by fault, as the engine's /metrics counts them. */
export async function infrastructureFaults(engine: TestEngine): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const { labels, value } of samples(await metricsText(engine), "skill_engine_sandbox_infrastructure_faults_total")) {
    const fault = labels.fault ?? "";
    counts[fault] = (counts[fault] ?? 0) + value;
  }
  return counts;
}

/** Runs executing right now, as the engine's /metrics reports them. */
export async function runsInFlight(engine: TestEngine): Promise<number> {
  return samples(await metricsText(engine), "skill_engine_runs_in_flight")[0]?.value ?? 0;
}
