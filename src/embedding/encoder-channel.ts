import type { ChildProcess } from "node:child_process";
import type { Worker } from "node:worker_threads";

/**
 * What an encoder host (a worker thread or a child process) says: `{type: "ready", runtime?,
 * fallbackReason?}` once its model is loaded (or `{type: "failed", error}`), then one
 * `{type: "result", id, vectors | error}` per `{id, texts}` it was sent, in arrival order.
 */
export type EncoderMessage =
  | { type: "ready"; runtime?: string; fallbackReason?: string }
  | { type: "failed"; error: string }
  | { type: "result"; id: number; vectors?: number[][]; error?: string };

/** A request to an encoder host. */
export interface EncoderRequest {
  readonly id: number;
  readonly texts: string[];
}

/** The one link to an encoder host, whatever it is. Listeners are removed by the function `on…` returns. */
export interface EncoderChannel {
  /** Where the model runs: a worker thread or a child process. */
  readonly isolation: "worker-thread" | "child-process";
  /** The worker's thread id, or the child's process id. */
  readonly id: number;
  send(request: EncoderRequest): void;
  onMessage(listener: (message: EncoderMessage) => void): () => void;
  /** Called once when the host is gone (exited, crashed, failed), with why. */
  onEnd(listener: (reason: string) => void): () => void;
  /** Keeps this process alive while a call waits; `unref` lets an idle host not. */
  ref(): void;
  unref(): void;
  /** Ends the host and resolves when it is gone. */
  stop(): Promise<void>;
}

export function workerChannel(worker: Worker): EncoderChannel {
  return {
    isolation: "worker-thread",
    id: worker.threadId,
    send: (request) => worker.postMessage(request),
    onMessage: (listener) => {
      worker.on("message", listener);
      return () => worker.off("message", listener);
    },
    onEnd: (listener) => {
      const onError = (error: Error): void => listener(`the encoder worker failed: ${error.message}`);
      const onExit = (code: number): void => listener(`the encoder worker exited with code ${code}`);
      worker.on("error", onError).on("exit", onExit);
      return () => worker.off("error", onError).off("exit", onExit);
    },
    ref: () => worker.ref(),
    unref: () => worker.unref(),
    stop: async () => {
      await worker.terminate();
    },
  };
}

/**
 * A child process (forked with an IPC channel) as an encoder host. Its own process, so that neither
 * this process's exit nor a native runtime's fault can take the other down mid-run: ONNX Runtime's
 * addon aborts the whole process when a worker thread is terminated during a model run
 * (docs/routing.md#embedders).
 */
export function processChannel(child: ChildProcess): EncoderChannel {
  // The IPC pipe has its own handle, which keeps this process alive unless unref'ed too.
  const pipe = (): { ref?: () => void; unref?: () => void } | undefined => child.channel ?? undefined;
  return {
    isolation: "child-process",
    id: child.pid ?? 0,
    send: (request) => {
      // A send racing the child's exit is answered by onEnd; it must not throw here.
      if (child.connected) child.send(request);
    },
    onMessage: (listener) => {
      const onMessage = (message: unknown): void => listener(message as EncoderMessage);
      child.on("message", onMessage);
      return () => child.off("message", onMessage);
    },
    onEnd: (listener) => {
      const onError = (error: Error): void => listener(`the encoder process failed: ${error.message}`);
      const onExit = (code: number | null, signal: NodeJS.Signals | null): void =>
        listener(`the encoder process exited with ${signal ?? `code ${code}`}`);
      child.on("error", onError).on("exit", onExit);
      return () => child.off("error", onError).off("exit", onExit);
    },
    ref: () => {
      child.ref();
      pipe()?.ref?.();
    },
    unref: () => {
      child.unref();
      pipe()?.unref?.();
    },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      // An idle host is unref'ed: without this, the process could end before the exit is seen.
      child.ref();
      child.kill("SIGKILL");
      await exited;
    },
  };
}
