import type { Duplex, Readable, Writable } from "node:stream";
import type Docker from "dockerode";
import type { Logger } from "pino";
import { SandboxUnavailableError } from "../../errors/index.js";
import { demultiplexAttachStream } from "./attach-demux.js";
import { fromDockerError, isAlreadyGone } from "./docker-errors.js";

/** A ping is the cheapest call the engine answers; one that takes longer than this is an engine in trouble. */
const PING_TIMEOUT_MS = 5_000;

/**
 * The Docker engine, call by call: each method logs what it is about to do with the container's
 * id, does it, treats "already gone" as done where that is the goal, and translates every other
 * failure in one place (`fromDockerError`). Nothing above this file calls dockerode.
 */
export class DockerEngineClient {
  constructor(
    private readonly docker: Docker,
    /** The sandbox image, named in the errors that concern it. */
    private readonly image: string,
    private readonly logger: Logger,
  ) {}

  /** Rejects with engine-unreachable when the engine does not answer within `timeoutMs` (a frozen or half-stopped engine). */
  async ping(timeoutMs = PING_TIMEOUT_MS): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const silent = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new SandboxUnavailableError(
              `the Docker engine did not answer a ping within ${timeoutMs} ms; the run is not the skill's: check the engine, then retry`,
              "engine-unreachable",
            ),
          ),
        timeoutMs,
      );
    });
    try {
      await Promise.race([this.call("ping the engine", () => this.docker.ping()), silent]);
    } finally {
      clearTimeout(timer);
    }
  }

  async inspectImage(): Promise<void> {
    await this.call(`inspect image ${this.image}`, () => this.docker.getImage(this.image).inspect());
  }

  async createContainer(spec: Docker.ContainerCreateOptions, runId: string): Promise<EngineContainer> {
    this.logger.debug({ runId }, "creating sandbox container");
    const container = await this.call("create a sandbox container", () => this.docker.createContainer(spec));
    return new EngineContainer(container, runId, this.image, this.logger);
  }

  /** Containers (running or not) carrying every one of `labels` (`key=value`), with their labels and creation time. */
  async listContainers(labels: readonly string[]): Promise<Array<{ id: string; labels: Record<string, string>; createdAt: Date }>> {
    const found = await this.call("list sandbox containers", () =>
      this.docker.listContainers({ all: true, filters: { label: [...labels] } }),
    );
    return found.map((info) => ({ id: info.Id, labels: info.Labels ?? {}, createdAt: new Date(info.Created * 1000) }));
  }

  /**
   * The engine's container events for containers carrying every one of `labels`, as they
   * happen, until the returned stream ends (the engine went away) or is destroyed.
   */
  async events(labels: readonly string[], actions: readonly string[]): Promise<Readable> {
    const stream = await this.call("follow the engine's events", () =>
      this.docker.getEvents({ filters: { type: ["container"], label: [...labels], event: [...actions] } }),
    );
    return stream as unknown as Readable;
  }

  /** Removes a container by id; already gone counts as removed, any other failure is logged. */
  async removeContainer(id: string): Promise<void> {
    await removeQuietly(this.docker.getContainer(id), this.logger);
  }

  private call<T>(action: string, work: () => Promise<T>): Promise<T> {
    return translated(this.image, action, work);
  }
}

/** One sandbox container, as the runs use it. */
export class EngineContainer {
  constructor(
    private readonly container: Docker.Container,
    readonly runId: string,
    private readonly image: string,
    private readonly logger: Logger,
  ) {}

  get id(): string {
    return this.container.id;
  }

  /** The container's stdout and stderr as one multiplexed stream (and its stdin, when `stdin`). */
  async attach(options: { stdin: boolean }): Promise<Duplex> {
    this.logger.debug({ containerId: this.id, runId: this.runId }, "attaching to sandbox container");
    const stream = await this.call("attach to a sandbox container", () =>
      this.container.attach({ stream: true, stdout: true, stderr: true, ...(options.stdin ? { stdin: true, hijack: true } : {}) }),
    );
    return stream as unknown as Duplex;
  }

  /** Splits the attach stream's frames into stdout and stderr, without copying them (attach-demux.ts). */
  demultiplex(attached: Duplex, stdout: Writable, stderr: Writable): void {
    demultiplexAttachStream(attached, stdout, stderr);
  }

  async start(): Promise<void> {
    this.logger.debug({ containerId: this.id, runId: this.runId }, "starting sandbox container");
    await this.call("start a sandbox container", () => this.container.start());
  }

  /** The exit code, once the container has stopped. */
  async wait(): Promise<number> {
    const outcome = (await this.call("wait for a sandbox container", () => this.container.wait())) as { StatusCode: number };
    return outcome.StatusCode;
  }

  /**
   * Whether the kernel's OOM killer hit a process of the container; `gone` when the container
   * no longer exists (removed from outside), which is an answer, not an error.
   */
  async state(): Promise<{ gone: boolean; oomKilled: boolean }> {
    try {
      const info = await this.call("inspect a sandbox container", () => this.container.inspect());
      return { gone: false, oomKilled: Boolean(info.State.OOMKilled) };
    } catch (error) {
      if (error instanceof SandboxUnavailableError && error.fault === "container-lost") return { gone: true, oomKilled: false };
      throw error;
    }
  }

  /** SIGKILL; a container already stopped or gone is what we wanted, anything else is logged. */
  kill(): void {
    this.logger.debug({ containerId: this.id, runId: this.runId }, "killing sandbox container");
    this.container.kill({ signal: "SIGKILL" }).catch((error: unknown) => {
      if (!isAlreadyGone(error))
        this.logger.warn({ err: error, containerId: this.id, runId: this.runId }, "could not kill sandbox container");
    });
  }

  /** Removes the container and its anonymous volumes; already gone counts as removed. */
  async remove(): Promise<void> {
    await removeQuietly(this.container, this.logger, this.runId);
  }

  private call<T>(action: string, work: () => Promise<T>): Promise<T> {
    return translated(this.image, action, work);
  }
}

/** Runs one engine call, translating its failure. */
async function translated<T>(image: string, action: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw fromDockerError(error, { image, action });
  }
}

/** Never throws: a container that cannot be removed is logged (the next start's reaper removes it). */
async function removeQuietly(container: Docker.Container, logger: Logger, runId?: string): Promise<void> {
  logger.debug({ containerId: container.id, runId }, "removing sandbox container");
  try {
    await container.remove({ force: true, v: true });
  } catch (error) {
    if (isAlreadyGone(error)) return;
    logger.error({ err: error, containerId: container.id, runId }, "could not remove sandbox container");
  }
}
