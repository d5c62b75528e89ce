/**
 * The MiniLM encoder worker's program (see `encoder-worker.ts` for the protocol): loads the model
 * with the runtime named in `workerData.runtime` on this thread, then answers embedding requests
 * one at a time, in arrival order.
 */
import { parentPort, workerData } from "node:worker_threads";
import { errorMessage } from "../../errors/index.js";
import { loadMiniLmRuntime, type MiniLmRuntime } from "./minilm-runtime.js";

const port = parentPort;
if (port === null) throw new Error("minilm-worker-main runs only as a worker thread");
const runtime = (workerData as { runtime?: MiniLmRuntime } | undefined)?.runtime ?? "native";

const describe = (error: unknown): string => (error instanceof Error && error.stack ? error.stack : errorMessage(error));

loadMiniLmRuntime(runtime).then(
  ({ encoder, runtime: loaded, fallbackReason }) => {
    let last: Promise<unknown> = Promise.resolve();
    port.on("message", ({ id, texts }: { id: number; texts: string[] }) => {
      last = last
        .then(() => encoder.embed(texts))
        .then(
          (vectors) => port.postMessage({ type: "result", id, vectors }),
          (error: unknown) => port.postMessage({ type: "result", id, error: describe(error) }),
        );
    });
    port.postMessage({ type: "ready", runtime: loaded, fallbackReason });
  },
  (error: unknown) => port.postMessage({ type: "failed", error: describe(error) }),
);
