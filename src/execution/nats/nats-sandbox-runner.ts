import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { anySignal } from "any-signal";
import type { Logger } from "pino";
import { type InfrastructureFault, RunCancelledError, SandboxUnavailableError } from "../../errors/index.js";
import {
  cancellationOf,
  type EngineHealth,
  type ExecutionPlane,
  type ExecutionResult,
  type RunInputFile,
  type SandboxRunRequest,
} from "../sandbox-runner.js";
import { isNoResponders, ReplyInbox } from "./reply-inbox.js";
import { MISSED_BEATS, RunnerDirectory } from "./runner-directory.js";
import type { Subjects } from "./subjects.js";
import { decodeReply, decodeStatus, encodeRun, type ReplyMessage, type RunnerStatus, runHeaders } from "./wire.js";

/** Attempts of a run that may be repeated (a test run, or an invocation with an idempotency key) whose runner vanished. */
const RETRYABLE_ATTEMPTS = 3;
/** How long a wipe waits for the runners' answers. */
const WIPE_WAIT_MS = 5_000;

export interface NatsSandboxRunnerOptions {
  readonly connection: NatsConnection;
  readonly subjects: Subjects;
  /** Prefix of this control plane's reply subjects. */
  readonly inboxPrefix: string;
  /**
   * How long to wait for a runner's acknowledgement, in beats of this length ({@link MISSED_BEATS} of them).
   * Once a runner took a run, its own beat (sent with its acknowledgement) decides when it is gone.
   */
  readonly heartbeatMs: number;
  /** How long a run waits for a runner with room before it answers UNAVAILABLE. */
  readonly dispatchWaitMs: number;
  readonly logger: Logger;
  /** Told about every finished run, with the files it was handed (for metrics); must not throw. */
  readonly onRunFinished?: (result: ExecutionResult, path: "runner", purpose: string, inputFiles: readonly RunInputFile[]) => void;
  /** Told about every run the infrastructure cut short (for metrics); must not throw. */
  readonly onInfrastructureFault?: (fault: InfrastructureFault, purpose: string) => void;
}

/**
 * The execution plane of a control plane whose runs execute on runner processes
 * (docs/execution-hosts.md): each run is published on the runs subject, where any runner with a
 * free slot takes it, and the answer comes back on a private reply subject. Nothing of the skill
 * is on a shared disk: code, files and payload travel in the message. A run the bus cannot place
 * (no runner, all full past the dispatch wait), or whose runner goes silent, is an infrastructure
 * fault (`SandboxUnavailableError`), never the skill's; it is executed at most once, except test
 * runs and invocations with an idempotency key, which are tried again when their runner vanished.
 */
export class NatsSandboxRunner implements ExecutionPlane {
  private readonly directory: RunnerDirectory;
  private readonly statusSubscription: Subscription;
  private readonly shutdown = new AbortController();
  private readonly inFlight = new Set<Promise<unknown>>();
  private waiting = 0;
  private dispatched = 0;
  private busConnected = true;

  constructor(private readonly options: NatsSandboxRunnerOptions) {
    setMaxListeners(0, this.shutdown.signal);
    this.directory = new RunnerDirectory();
    this.statusSubscription = options.connection.subscribe(options.subjects.status, {
      callback: (error, msg) => {
        if (error) return;
        const status = decodeStatus(msg.data);
        if (status) this.directory.heard(status);
      },
    });
    void this.followBus();
  }

  get queueDepth(): number {
    return this.waiting;
  }

  get runningRuns(): number {
    return this.dispatched;
  }

  get warmIdle(): number {
    return this.directory.live().reduce((sum, status) => sum + status.warmIdle, 0);
  }

  get awaitingRemoval(): number {
    return this.directory.live().reduce((sum, status) => sum + status.awaitingRemoval, 0);
  }

  /** The runners heard from lately, as they last described themselves (for metrics and health). */
  runners(): RunnerStatus[] {
    return this.directory.live();
  }

  startPool(): void {
    // The runners keep their own warm pools; the directory has been listening since construction.
  }

  async run(request: SandboxRunRequest): Promise<ExecutionResult> {
    if (this.shutdown.signal.aborted) throw new RunCancelledError("shutdown");
    // Runners do not build environments yet: a run that needs one must not reach a host without
    // its packages, where it would fail as if the skill were wrong (docs/packages.md#execution-hosts).
    if (request.environment) {
      throw new SandboxUnavailableError(
        `environment ${request.environment.id} is not available on execution hosts over the bus; ` +
          "skills with packages run on the service's local Docker engine only (docs/packages.md#execution-hosts)",
        "engine-error",
      );
    }
    const signal = anySignal([request.signal, this.shutdown.signal]);
    const work = this.runWithRetries(request, signal);
    this.inFlight.add(work);
    try {
      return await work;
    } catch (error) {
      if (error instanceof SandboxUnavailableError) this.options.onInfrastructureFault?.(error.fault, request.purpose);
      else if (error instanceof RunCancelledError && error.reason === "shutdown")
        this.options.onInfrastructureFault?.("shutdown", request.purpose);
      throw error;
    } finally {
      this.inFlight.delete(work);
      signal.clear();
    }
  }

  async health(): Promise<EngineHealth> {
    return this.directory.health(this.busConnected && !this.options.connection.isClosed());
  }

  /** Each runner removes what its previous life left on its own engine, when it starts and periodically. */
  async reapOrphans(): Promise<{ containers: number; runDirectories: number }> {
    return { containers: 0, runDirectories: 0 };
  }

  /** Every runner wipes its own sandbox directory; the counts are added up. */
  async wipe(): Promise<{ removedRunDirectories: number }> {
    const expected = this.directory.live().length;
    let removedRunDirectories = 0;
    if (expected === 0) return { removedRunDirectories };
    const replies = await this.options.connection.requestMany(this.options.subjects.wipe, "", {
      strategy: "count",
      maxMessages: expected,
      maxWait: WIPE_WAIT_MS,
    });
    for await (const msg of replies) {
      if (isNoResponders(msg)) break;
      const count = Number((msg.json<{ removedRunDirectories?: unknown }>() ?? {}).removedRunDirectories);
      if (Number.isInteger(count) && count >= 0) removedRunDirectories += count;
    }
    return { removedRunDirectories };
  }

  async close(): Promise<void> {
    this.shutdown.abort(new RunCancelledError("shutdown"));
    await Promise.allSettled([...this.inFlight]);
    this.statusSubscription.unsubscribe();
  }

  private async runWithRetries(request: SandboxRunRequest, signal: AbortSignal): Promise<ExecutionResult> {
    const attempts = request.purpose === "test" || request.idempotencyKey ? RETRYABLE_ATTEMPTS : 1;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.dispatch(request, signal);
      } catch (error) {
        if (!(error instanceof SandboxUnavailableError && error.fault === "runner-lost") || attempt >= attempts) throw error;
        // Counted though the caller never hears of it: operators see every runner lost mid-run.
        this.options.onInfrastructureFault?.(error.fault, request.purpose);
        this.options.logger.warn(
          { skill: request.skillName, purpose: request.purpose, attempt, reason: error.message },
          "runner lost; trying the run again on another",
        );
      }
    }
  }

  /** One attempt: find a runner with room, then follow its beats to the answer. */
  private async dispatch(request: SandboxRunRequest, signal: AbortSignal): Promise<ExecutionResult> {
    const { connection, subjects, inboxPrefix, logger } = this.options;
    const id = randomUUID();
    const body = encodeRun(id, request);
    const headers = runHeaders(request);
    const maxPayload = connection.info?.max_payload ?? Number.POSITIVE_INFINITY;
    if (body.byteLength > maxPayload) {
      // Input files travel in the message too (in base64): the caller hears how much of it they are.
      const inputBytes = (request.inputFiles ?? []).reduce((sum, file) => sum + file.content.byteLength, 0);
      const ofWhich = inputBytes > 0 ? ` (its input files ${mib(inputBytes)} MiB of it, ${mib((4 * inputBytes) / 3)} MiB in base64)` : "";
      throw new SandboxUnavailableError(
        `the run request is ${mib(body.byteLength)} MiB${ofWhich}, more than the bus's max_payload of ${mib(maxPayload)} MiB; ` +
          `raise max_payload in nats-server's configuration (docs/execution-hosts.md#${inputBytes > 0 ? "files" : "the-bus"})`,
        "bus-unreachable",
      );
    }
    const giveUpAt = Date.now() + this.options.dispatchWaitMs;
    const beatLimitMs = MISSED_BEATS * this.options.heartbeatMs;
    let inbox: ReplyInbox | undefined;
    let accepted: Extract<ReplyMessage, { type: "accepted" }> | undefined;
    this.waiting++;
    try {
      while (!accepted) {
        if (signal.aborted) throw cancellationOf(signal);
        if (connection.isClosed())
          throw new SandboxUnavailableError("the message bus connection is closed; the run is not the skill's", "bus-unreachable");
        inbox?.close();
        inbox = new ReplyInbox(connection, inboxPrefix);
        connection.publish(subjects.runs, body, { reply: inbox.subject, headers });
        const first = await inbox.next(beatLimitMs, signal);
        if ("aborted" in first) throw cancellationOf(signal);
        if ("timeout" in first) {
          throw new SandboxUnavailableError(
            `no runner acknowledged the run within ${beatLimitMs} ms (the bus or the runner that took it is in trouble); the run is not the skill's`,
            "runner-lost",
          );
        }
        if (isNoResponders(first.msg)) {
          await this.waitForRoom(giveUpAt, signal);
          continue;
        }
        const reply = decodeReply(first.msg.data);
        if (reply?.type === "accepted") accepted = reply;
        else if (reply?.type === "failed") throw this.failure(reply, "a runner", signal);
        else
          throw new SandboxUnavailableError(
            "a runner answered the run with a message this service does not understand (a different version?)",
            "runner-lost",
          );
      }
    } catch (error) {
      inbox?.close();
      throw error;
    } finally {
      this.waiting--;
    }
    logger.debug(
      { runId: id, runner: accepted.runner, skill: request.skillName, purpose: request.purpose, agent: request.agentId },
      "run taken by a runner",
    );
    this.dispatched++;
    try {
      return await this.answer(id, inbox as ReplyInbox, accepted, request, signal);
    } finally {
      this.dispatched--;
      inbox?.close();
    }
  }

  /** After "no responders": waits for a runner to report room, up to the dispatch wait; throws when there is none. */
  private async waitForRoom(giveUpAt: number, signal: AbortSignal): Promise<void> {
    const live = this.directory.live();
    const serving = live.filter((status) => status.engineReady && !status.stopping);
    const remaining = giveUpAt - Date.now();
    if (serving.length === 0 || remaining <= 0) {
      const why =
        serving.length === 0
          ? live.length === 0
            ? "no runner is connected to the bus"
            : "no runner can take runs now (engines away or stopping)"
          : `every runner was full for ${this.options.dispatchWaitMs} ms`;
      throw new SandboxUnavailableError(`${why}; the run is not the skill's: start a runner (npm run runner) or retry`, "no-runner");
    }
    // A runner announces a freed slot at once; the beat bounds the wait should that message be missed.
    await this.directory.waitForRoom(Math.min(remaining, this.options.heartbeatMs), signal);
    if (signal.aborted) throw cancellationOf(signal);
  }

  private async answer(
    id: string,
    inbox: ReplyInbox,
    accepted: Extract<ReplyMessage, { type: "accepted" }>,
    request: SandboxRunRequest,
    signal: AbortSignal,
  ): Promise<ExecutionResult> {
    const beatLimitMs = MISSED_BEATS * accepted.heartbeatMs;
    for (;;) {
      const next = await inbox.next(beatLimitMs, signal);
      if ("aborted" in next) {
        // The runner stops the run and removes its container; the caller hears the cancellation now.
        this.options.connection.publish(accepted.cancel, id);
        throw cancellationOf(signal);
      }
      if ("timeout" in next) {
        throw new SandboxUnavailableError(
          `the runner ${accepted.runner} went silent for ${beatLimitMs} ms while running the skill (stopped, killed or cut off from the bus); the run is not the skill's; retry`,
          "runner-lost",
        );
      }
      const reply = decodeReply(next.msg.data);
      if (reply?.type === "result") {
        this.options.onRunFinished?.(reply.result, "runner", request.purpose, request.inputFiles ?? []);
        return reply.result;
      }
      if (reply?.type === "failed") throw this.failure(reply, `the runner ${accepted.runner}`, signal);
      // "alive" (or anything unknown): the runner is still there.
    }
  }

  private failure(reply: Extract<ReplyMessage, { type: "failed" }>, who: string, signal: AbortSignal): Error {
    if (reply.kind === "cancelled") {
      if (signal.aborted) return cancellationOf(signal);
      // Not ours: the runner is shutting down. Its run never finished: another runner may take it.
      return new SandboxUnavailableError(
        `${who} stopped before the run finished (${reply.message}); the run is not the skill's; retry`,
        "runner-lost",
      );
    }
    if (reply.kind === "refused") return new SandboxUnavailableError(`${who} refused the run: ${reply.message}`, "no-runner");
    return new SandboxUnavailableError(reply.message, reply.fault ?? "engine-unreachable");
  }

  private async followBus(): Promise<void> {
    for await (const event of this.options.connection.status()) {
      if (event.type === "disconnect") this.busConnected = false;
      else if (event.type === "reconnect") this.busConnected = true;
    }
  }
}

function mib(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(1);
}
