import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { startEncoderWorker } from "./encoder-host.js";
import { USE_LITE_EMBEDDINGS_PACKAGE, USE_LITE_MODEL_PACKAGE, type SentenceEncoderLoader } from "./use-lite-encoder.js";

/**
 * The worker's program. It is plain CommonJS in a string, not a module file, so that it runs the
 * same from `src/` under vitest or tsx and from `dist/` in production, without a TypeScript loader
 * inside the worker. The parent resolves the package paths, so the worker's cwd does not matter.
 */
const WORKER_SCRIPT = `
"use strict";
const { parentPort, workerData } = require("node:worker_threads");
const { initModel } = require(workerData.embeddingsPath);
const { modelSource } = require(workerData.modelPath);
const describe = (error) => String((error && error.stack) || error);
initModel(modelSource).then(
  (model) => {
    let last = Promise.resolve();
    parentPort.on("message", ({ id, texts }) => {
      // One model run at a time, in arrival order.
      last = last
        .then(() => model.embed(texts))
        .then(
          (vectors) => parentPort.postMessage({ type: "result", id, vectors }),
          (error) => parentPort.postMessage({ type: "result", id, error: describe(error) }),
        );
    });
    parentPort.postMessage({ type: "ready" });
  },
  (error) => parentPort.postMessage({ type: "failed", error: describe(error) }),
);
`;

/**
 * Loads the encoder into a worker thread, so that model runs (up to a second for a batch of long
 * descriptions) never block the gRPC event loop. Resolves once the model is ready.
 */
export const loadUseLiteEncoderInWorker: SentenceEncoderLoader = async () => {
  const require = createRequire(import.meta.url);
  const worker = new Worker(WORKER_SCRIPT, {
    eval: true,
    name: "use-lite-encoder",
    workerData: {
      embeddingsPath: require.resolve(USE_LITE_EMBEDDINGS_PACKAGE),
      modelPath: require.resolve(USE_LITE_MODEL_PACKAGE),
    },
  });
  return startEncoderWorker(worker);
};
