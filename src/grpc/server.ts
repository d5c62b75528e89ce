import { chmod, readFile, rm } from "node:fs/promises";
import { createSecureContext } from "node:tls";
import { fileURLToPath } from "node:url";
import { Server, ServerCredentials } from "@grpc/grpc-js";
import { loadSync, type PackageDefinition } from "@grpc/proto-loader";
import { ReflectionService } from "@grpc/reflection";
import { HealthImplementation, protoPath as healthProtoPath, type ServingStatus } from "grpc-health-check";
import type { Logger } from "pino";
import type { ControlPlane } from "../control/index.js";
import type { SkillBundles, SkillSources } from "../sources/index.js";
import type { Authenticator } from "../identity/index.js";
import type { ServiceMetrics } from "../observability/index.js";
import type { LearningService } from "../learning/index.js";
import type { RoutingService } from "../routing/index.js";
import type { PlaybookService } from "../playbook/index.js";
import type { SecretsService } from "../secrets/index.js";
import { PlaybookService as PlaybookServiceDefinition } from "../gen/skillengine/v1/playbook.js";
import { SkillEngineService } from "../gen/skillengine/v1/skill_engine.js";
import { CallTracker } from "./call-tracker.js";
import { PLAYBOOK_SERVICE_NAME, playbookHandlers } from "./playbook-handlers.js";
import { loadApiTypes, withTotalDecoding } from "./request-decoding.js";
import { skillEngineHandlers } from "./skill-engine-handlers.js";
import { errorMessage } from "../errors/index.js";

export const SKILL_ENGINE_SERVICE_NAME = "skillengine.v1.SkillEngine";

const PROTO_ROOT = fileURLToPath(new URL("../../proto", import.meta.url));
const SKILL_ENGINE_PROTO = "skillengine/v1/skill_engine.proto";
const PLAYBOOK_PROTO = "skillengine/v1/playbook.proto";
/** A health Watch never ends by itself; shutdown ends it instead of waiting for it. */
const HEALTH_WATCH_METHOD = "/grpc.health.v1.Health/Watch";

export interface GrpcServerOptions {
  readonly host: string;
  /** 0 lets the OS pick a free port. */
  readonly port: number;
  /** The control plane's use cases. */
  readonly control: ControlPlane;
  readonly routing: RoutingService;
  /** Skill folders and bundles (docs/skill-sources.md). */
  readonly sources: SkillSources;
  readonly bundles: SkillBundles;
  /** Sessions, candidates, evolution and outcomes (docs/learning.md). */
  readonly learning: LearningService;
  /** The calling agents' secrets (docs/security.md#secrets). */
  readonly secrets: SecretsService;
  /** The Playbook service (lessons); not served when absent. */
  readonly playbook?: PlaybookService;
  /** Turns each call's `authorization` metadata into the calling agent. */
  readonly authenticator: Authenticator;
  readonly logger: Logger;
  readonly metrics?: ServiceMetrics;
  /** TLS credentials (see `loadServerCredentials`); plaintext when absent. */
  readonly credentials?: ServerCredentials;
  /**
   * The largest request and response message, in bytes: room for a run's input files and for the
   * files it hands back (docs/files.md#message-sizes). @default 4 MiB and 8 MiB
   */
  readonly maxMessageBytes?: { readonly request: number; readonly response: number };
  /**
   * A unix socket the same server also listens on, plaintext, mode 0600, removed at shutdown: the in-process
   * MCP door's way to the API (docs/mcp.md#one-implementation), so that every call it makes is a gRPC call
   * with the API's own authentication, limits and errors. Not bound when absent.
   */
  readonly privateSocket?: string;
}

/** A bound, serving gRPC server. */
export interface RunningGrpcServer {
  readonly port: number;
  /** Sets the health status of the whole server and of the SkillEngine service. */
  setServing(serving: boolean): void;
  /** Counted calls (every call but health Watch streams): in flight now, and ended since start. */
  readonly calls: { readonly inFlight: number; readonly finished: number };
  /**
   * Stops accepting calls: the listener closes, every connection is told to go away (new calls on
   * it fail with UNAVAILABLE), health Watch streams end with UNAVAILABLE. Calls in flight go on.
   * Resolves when they have all ended and every connection is closed. Idempotent.
   */
  drain(): Promise<void>;
  /** Cancels the calls still in flight and drops every connection. */
  forceClose(): void;
}

/** Serves SkillEngine, grpc.health.v1.Health and server reflection (v1 and v1alpha). */
export async function startGrpcServer(options: GrpcServerOptions): Promise<RunningGrpcServer> {
  const calls = new CallTracker(new Set([HEALTH_WATCH_METHOD]));
  const server = new Server({
    "grpc.max_receive_message_length": options.maxMessageBytes?.request ?? 4 * 1024 * 1024,
    "grpc.max_send_message_length": options.maxMessageBytes?.response ?? 8 * 1024 * 1024,
    interceptors: [calls.interceptor],
  });
  // Every request deserializer answers, never throws: grpc-js would say INTERNAL (request-decoding.ts).
  const api = loadApiTypes(PROTO_ROOT, [SKILL_ENGINE_PROTO, PLAYBOOK_PROTO]);
  server.addService(
    withTotalDecoding(SkillEngineService, api),
    skillEngineHandlers(
      options.control,
      options.routing,
      options.authenticator,
      options.logger,
      options.metrics,
      { sources: options.sources, bundles: options.bundles },
      options.learning,
      options.secrets,
    ),
  );

  if (options.playbook) {
    const deps = { authenticator: options.authenticator, logger: options.logger, ...(options.metrics ? { metrics: options.metrics } : {}) };
    server.addService(withTotalDecoding(PlaybookServiceDefinition, api), playbookHandlers(options.playbook, deps));
  }

  const health = new HealthImplementation({
    "": "NOT_SERVING",
    [SKILL_ENGINE_SERVICE_NAME]: "NOT_SERVING",
    ...(options.playbook ? { [PLAYBOOK_SERVICE_NAME]: "NOT_SERVING" } : {}),
  });
  health.addToServer(server);
  new ReflectionService(reflectionPackages()).addToServer(server);

  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${options.host}:${options.port}`, options.credentials ?? ServerCredentials.createInsecure(), (error, boundPort) =>
      error ? reject(new Error(`cannot listen on ${options.host}:${options.port}: ${error.message}`)) : resolve(boundPort),
    );
  });
  const socket = options.privateSocket;
  if (socket !== undefined) {
    // A socket file left by a process that died is in the way of bind; the directory is the service's own (0700).
    await rm(socket, { force: true });
    try {
      await new Promise<void>((resolve, reject) => {
        server.bindAsync(`unix:${socket}`, ServerCredentials.createInsecure(), (error) =>
          error ? reject(new Error(`cannot listen on unix:${socket}: ${error.message}`)) : resolve(),
        );
      });
      await chmod(socket, 0o600);
    } catch (error) {
      server.forceShutdown();
      throw error;
    }
  }
  const removeSocket = (): Promise<void> => (socket === undefined ? Promise.resolve() : rm(socket, { force: true }).catch(() => undefined));

  let drained: Promise<void> | undefined;
  const drain = (): Promise<void> => {
    drained ??= new Promise<void>((resolve) => {
      server.tryShutdown(() => void removeSocket().then(resolve));
      const watches = calls.endStreams("the server is shutting down");
      if (watches > 0) options.logger.info({ watches }, "ended health Watch streams");
    });
    return drained;
  };
  return {
    port,
    setServing(serving) {
      const state: ServingStatus = serving ? "SERVING" : "NOT_SERVING";
      health.setStatus("", state);
      health.setStatus(SKILL_ENGINE_SERVICE_NAME, state);
      if (options.playbook) health.setStatus(PLAYBOOK_SERVICE_NAME, state);
    },
    calls,
    drain,
    forceClose() {
      server.forceShutdown();
      void removeSocket();
    },
  };
}

/** The TLS files cannot be used: an operator's mistake, reported without a stack trace. */
export class TlsFilesError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "TlsFilesError";
  }
}

/**
 * Reads the PEM certificate chain and private key (at start-up: a later change to the files needs
 * a restart) and checks that they make a usable pair; errors name the variable and the file.
 */
export async function loadServerCredentials(tls: { readonly certFile: string; readonly keyFile: string }): Promise<ServerCredentials> {
  const read = async (file: string, variable: string, what: string): Promise<Buffer> => {
    try {
      return await readFile(file);
    } catch (error) {
      throw new TlsFilesError(`${variable} (${file}): cannot read the ${what}: ${messageOf(error)}`, { cause: error });
    }
  };
  const certChain = await read(tls.certFile, "SKILL_ENGINE_TLS_CERT", "PEM certificate chain");
  const privateKey = await read(tls.keyFile, "SKILL_ENGINE_TLS_KEY", "PEM private key");
  const check = (options: { cert?: Buffer; key?: Buffer }, problem: string): void => {
    try {
      createSecureContext(options);
    } catch (error) {
      throw new TlsFilesError(`${problem}: ${messageOf(error)}`, { cause: error });
    }
  };
  check({ cert: certChain }, `SKILL_ENGINE_TLS_CERT (${tls.certFile}) is not a PEM certificate chain`);
  check({ key: privateKey }, `SKILL_ENGINE_TLS_KEY (${tls.keyFile}) is not an unencrypted PEM private key`);
  check(
    { cert: certChain, key: privateKey },
    `SKILL_ENGINE_TLS_KEY (${tls.keyFile}) is not the private key of the certificate in SKILL_ENGINE_TLS_CERT (${tls.certFile})`,
  );
  return ServerCredentials.createSsl(null, [{ cert_chain: certChain, private_key: privateKey }], false);
}

function messageOf(error: unknown): string {
  return errorMessage(error);
}

/** Descriptors that reflection advertises: our API and the health service. */
function reflectionPackages(): PackageDefinition {
  const loaderOptions = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };
  return {
    // One load for every file of the package: proto-loader describes a package as one file, and
    // reflection keeps the first description of a file name it sees.
    ...loadSync([SKILL_ENGINE_PROTO, PLAYBOOK_PROTO], { ...loaderOptions, includeDirs: [PROTO_ROOT] }),
    ...loadSync(healthProtoPath, loaderOptions),
  };
}
