/**
 * The MiniLM encoder host's program, as a worker thread or as a child process (see
 * `encoder-channel.ts` for the protocol): loads the model with the runtime named in
 * `workerData.runtime` (a worker) or the first argument (a child), then answers embedding requests
 * one at a time, in arrival order. A child exits when its parent's IPC channel closes, so it never
 * outlives the service, however the service ended.
 */
import { parentPort, workerData } from "node:worker_threads";
import { errorMessage } from "../errors/index.js";
import type { EncoderMessage, EncoderRequest } from "./encoder-channel.js";
import { loadMiniLmRuntime, type MiniLmRuntime } from "./minilm-runtime.js";

interface Port {
  post(message: EncoderMessage): void;
  onRequest(listener: (request: EncoderRequest) => void): void;
}

function parent(): Port {
  if (parentPort !== null) {
    const port = parentPort;
    return { post: (message) => port.postMessage(message), onRequest: (listener) => port.on("message", listener) };
  }
  const send = process.send?.bind(process);
  if (send === undefined) throw new Error("minilm-host-main runs only as a worker thread or a forked child process");
  process.on("disconnect", () => process.exit(0));
  // A terminal's Ctrl-C reaches the whole process group: the service drains (and may still embed)
  // while this host lives on; it ends when the service stops it or goes away (the channel closes).
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => undefined);
  return {
    post: (message) => {
      // The parent may be gone between the check and the write: then this host ends too.
      if (process.connected) send(message, undefined, {}, (error) => error && process.exit(0));
    },
    onRequest: (listener) => process.on("message", (request) => listener(request as EncoderRequest)),
  };
}

const port = parent();
const runtime = ((workerData as { runtime?: MiniLmRuntime } | undefined)?.runtime ?? process.argv[2] ?? "native") as MiniLmRuntime;

const describe = (error: unknown): string => (error instanceof Error && error.stack ? error.stack : errorMessage(error));

loadMiniLmRuntime(runtime).then(
  ({ encoder, runtime: loaded, fallbackReason }) => {
    let last: Promise<unknown> = Promise.resolve();
    port.onRequest(({ id, texts }) => {
      last = last
        .then(() => encoder.embed(texts))
        .then(
          (vectors) => port.post({ type: "result", id, vectors }),
          (error: unknown) => port.post({ type: "result", id, error: describe(error) }),
        );
    });
    port.post({ type: "ready", runtime: loaded, ...(fallbackReason === undefined ? {} : { fallbackReason }) });
  },
  (error: unknown) => port.post({ type: "failed", error: describe(error) }),
);
