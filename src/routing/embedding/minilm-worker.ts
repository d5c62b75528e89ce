import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { startEncoderWorker } from "./encoder-worker.js";
import type { MiniLmRuntime } from "./minilm-runtime.js";
import type { SentenceEncoderLoader } from "./use-lite-encoder.js";

/**
 * Where the worker's program is: compiled JavaScript beside this file when it runs from `dist/`;
 * when it runs from `src/` (vitest, tsx scripts) the same program compiled in `dist/`, which
 * `npm test` and the bench scripts build first (scripts/ensure-ready.sh). A worker thread cannot
 * run TypeScript without a loader that production has no use for.
 */
function workerProgram(): URL {
  const candidates = [
    new URL("./minilm-worker-main.js", import.meta.url),
    new URL("../../../dist/routing/embedding/minilm-worker-main.js", import.meta.url),
  ];
  const found = candidates.find((candidate) => existsSync(fileURLToPath(candidate)));
  if (found === undefined) {
    throw new Error(
      `the MiniLM worker program is not compiled (looked for ${candidates.map((c) => fileURLToPath(c)).join(", ")}); run npm run build`,
    );
  }
  return found;
}

/**
 * Loads MiniLM with `runtime` into a worker thread, so that model runs never block the gRPC event
 * loop. The loader resolves once the model is ready.
 */
export const miniLmWorkerLoader =
  (runtime: MiniLmRuntime): SentenceEncoderLoader =>
  async () =>
    startEncoderWorker(new Worker(workerProgram(), { name: "minilm-encoder", workerData: { runtime } }));
