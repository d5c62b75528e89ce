import type { Msg, NatsConnection, Subscription } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { errorMessage, RunCancelledError, SandboxUnavailableError } from "../../errors/index.js";
import type { EngineHealth, ExecutionPlane } from "../sandbox-runner.js";
import { RUNNERS_QUEUE, type Subjects } from "./subjects.js";
import { encodeResultReply } from "./reply-fit.js";
import { decodeRun, encodeJson, encodeReply, type ReplyMessage, type RunnerStatus, WIRE_VERSION } from "./wire.js";

export interface RunServerOptions {
  readonly connection: NatsConnection;
  readonly subjects: Subjects;
  readonly runnerId: string;
  /** Runs taken at once: one subscription per free slot. */
  readonly slots: number;
  readonly heartbeatMs: number;
  readonly logger: Logger;
}

/**
 * The runner's side of the bus (docs/execution-hosts.md): takes runs from the runs subject and
 * executes them on the local engine. It holds one queue-group subscription per free slot, each
 * for a single message, so a full runner is not offered anything (natural back-pressure) and the
 * bus answers "no responders" when every runner is full; a slot is offered again when its run
 * ends. While a run goes on, the runner beats on the run's reply subject so the control plane can
 * tell a long run from a vanished runner. Offers stop while the engine is away and at shutdown.
 */
export class RunServer {
  private readonly offers = new Set<Subscription>();
  private readonly running = new Map<string, AbortController>();
  private readonly finished = new Set<Promise<void>>();
  private readonly control: Subscription[] = [];
  private engine: EngineHealth = { ready: false, detail: "not probed yet" };
  private stopping = false;
  private beat: NodeJS.Timeout | undefined;

  constructor(
    private readonly executor: ExecutionPlane,
    private readonly options: RunServerOptions,
  ) {}

  start(): void {
    const { connection, subjects, runnerId } = this.options;
    this.control.push(
      connection.subscribe(subjects.cancel(runnerId), {
        callback: (error, msg) => {
          if (!error) this.running.get(msg.string())?.abort(new RunCancelledError("cancelled"));
        },
      }),
      connection.subscribe(subjects.wipe, {
        callback: (error, msg) => {
          if (error) return;
          this.executor.wipe().then(
            (wiped) => msg.respond(encodeJson(wiped)),
            (failure: unknown) => this.options.logger.error({ err: failure }, "wipe requested over the bus failed"),
          );
        },
      }),
    );
    this.beat = setInterval(() => this.publishStatus(), this.options.heartbeatMs);
    this.beat.unref();
    this.offer();
    this.publishStatus();
  }

  /** What the engine probe found: offers are withdrawn while the engine is away, made again when it answers. */
  engineHealth(health: EngineHealth): void {
    const changed = health.ready !== this.engine.ready;
    this.engine = health;
    if (!changed) return;
    if (health.ready) this.offer();
    else void this.withdrawOffers();
    this.publishStatus();
  }

  get busy(): number {
    return this.running.size;
  }

  status(): RunnerStatus {
    return {
      v: WIRE_VERSION,
      runner: this.options.runnerId,
      slots: this.options.slots,
      busy: this.running.size,
      warmIdle: this.executor.warmIdle,
      awaitingRemoval: this.executor.awaitingRemoval,
      engineReady: this.engine.ready,
      engineDetail: this.engine.detail,
      stopping: this.stopping,
      heartbeatMs: this.options.heartbeatMs,
    };
  }

  /**
   * Takes nothing more (pending offers are drained: a run already on its way is still taken),
   * then lets runs in flight finish; the caller stops them past its grace by closing the executor.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.withdrawOffers();
    this.publishStatus();
    await Promise.allSettled([...this.finished]);
  }

  /** Runs in flight, each settling when its answer has been sent. */
  inFlight(): Promise<unknown> {
    return Promise.allSettled([...this.finished]);
  }

  /** Leaves the bus: a last status says so, so that control planes stop counting on this runner at once. */
  close(): void {
    if (this.beat) clearInterval(this.beat);
    for (const subscription of this.control.splice(0)) subscription.unsubscribe();
    if (!this.options.connection.isClosed())
      this.options.connection.publish(this.options.subjects.status, encodeJson({ ...this.status(), gone: true }));
  }

  /** One single-message subscription per free slot, while the engine answers and the runner is not stopping. */
  private offer(): void {
    if (this.stopping || !this.engine.ready || this.options.connection.isClosed()) return;
    while (this.offers.size + this.running.size < this.options.slots) {
      const subscription: Subscription = this.options.connection.subscribe(this.options.subjects.runs, {
        queue: RUNNERS_QUEUE,
        max: 1,
        callback: (error, msg) => {
          this.offers.delete(subscription);
          if (!error) this.take(msg);
        },
      });
      this.offers.add(subscription);
    }
  }

  private async withdrawOffers(): Promise<void> {
    const offers = [...this.offers];
    // Forgotten at once, so that offers made again (the engine came back) are counted afresh.
    this.offers.clear();
    // drain, not unsubscribe: a run the bus already sent to an offer is still taken and answered.
    await Promise.allSettled(offers.map((subscription) => subscription.drain()));
  }

  private take(msg: Msg): void {
    const done = this.serve(msg).finally(() => {
      this.finished.delete(done);
      this.offer();
      // A freed slot is announced at once: a control plane waiting for room dispatches now.
      this.publishStatus();
    });
    this.finished.add(done);
  }

  private async serve(msg: Msg): Promise<void> {
    const { logger, runnerId, subjects } = this.options;
    const send = (bytes: Uint8Array): void => {
      if (msg.reply) this.options.connection.publish(msg.reply, bytes);
    };
    const reply = (message: ReplyMessage): void => send(encodeReply(message));
    const decoded = decodeRun(msg.data, msg.headers);
    if ("problem" in decoded) {
      logger.warn({ problem: decoded.problem }, "refusing a malformed run request");
      reply({ type: "failed", kind: "refused", message: `malformed run request: ${decoded.problem}` });
      return;
    }
    const { run, request } = decoded;
    const controller = new AbortController();
    this.running.set(run.id, controller);
    reply({ type: "accepted", runner: runnerId, cancel: subjects.cancel(runnerId), heartbeatMs: this.options.heartbeatMs });
    const alive = setInterval(() => reply({ type: "alive" }), this.options.heartbeatMs);
    try {
      const result = await this.executor.run({ ...request, signal: controller.signal });
      // Output files that would not fit the bus are cut, never the run failed (docs/execution-hosts.md#files).
      const maxPayload = this.options.connection.info?.max_payload ?? Number.POSITIVE_INFINITY;
      const fitted = encodeResultReply(result, maxPayload);
      if (fitted.cut) logger.warn({ runId: run.id, skill: run.skillName, maxPayload }, fitted.cut);
      send(fitted.bytes);
    } catch (error) {
      if (error instanceof SandboxUnavailableError)
        reply({ type: "failed", kind: "unavailable", fault: error.fault, message: error.message });
      else if (error instanceof RunCancelledError) reply({ type: "failed", kind: "cancelled", message: error.message });
      else {
        logger.error({ err: error, runId: run.id, skill: run.skillName }, "run failed on this runner");
        reply({
          type: "failed",
          kind: "unavailable",
          fault: "engine-error",
          message: `the runner ${runnerId} could not run the skill: ${errorMessage(error)}; the run is not the skill's`,
        });
      }
    } finally {
      clearInterval(alive);
      this.running.delete(run.id);
    }
  }

  private publishStatus(): void {
    if (this.options.connection.isClosed()) return;
    this.options.connection.publish(this.options.subjects.status, encodeJson(this.status()));
  }
}
