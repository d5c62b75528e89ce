import { fork } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { processChannel, workerChannel } from "./encoder-channel.js";
import { startEncoder } from "./encoder-host.js";
import type { MiniLmRuntime } from "./minilm-runtime.js";
import type { SentenceEncoderLoader } from "./use-lite-encoder.js";

/**
 * Where the host's program is: compiled JavaScript beside this file when it runs from `dist/`;
 * when it runs from `src/` (vitest, tsx scripts) the same program compiled in `dist/`, which
 * `npm test` and the bench scripts build first (scripts/ensure-ready.sh). A worker thread or a child
 * cannot run TypeScript without a loader that production has no use for.
 */
function hostProgram(): URL {
  const candidates = [
    new URL("./minilm-host-main.js", import.meta.url),
    new URL("../../../dist/routing/embedding/minilm-host-main.js", import.meta.url),
  ];
  const found = candidates.find((candidate) => existsSync(fileURLToPath(candidate)));
  if (found === undefined) {
    throw new Error(
      `the MiniLM encoder program is not compiled (looked for ${candidates.map((c) => fileURLToPath(c)).join(", ")}); run npm run build`,
    );
  }
  return found;
}

/**
 * Loads MiniLM with `runtime` away from the gRPC event loop, resolving once the model is ready:
 * the native runtime in a child process of its own (ONNX Runtime's addon aborts the whole process
 * when a thread running it is terminated mid-run, as any exit does), the WebAssembly one in a worker
 * thread. docs/routing.md#embedders.
 */
export const miniLmLoader =
  (runtime: MiniLmRuntime): SentenceEncoderLoader =>
  async () => {
    const program = hostProgram();
    if (runtime === "wasm") return startEncoder(workerChannel(new Worker(program, { name: "minilm-encoder", workerData: { runtime } })));
    const child = fork(fileURLToPath(program), [runtime], {
      // Not this process's flags (a test runner's loaders, an inspector port): a plain Node program.
      execArgv: [],
      stdio: ["ignore", "ignore", "inherit", "ipc"],
      serialization: "advanced",
    });
    return startEncoder(processChannel(child));
  };
