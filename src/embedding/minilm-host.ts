import { fork } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { processChannel, workerChannel } from "./encoder-channel.js";
import { startEncoder } from "./encoder-host.js";
import type { MiniLmRuntime } from "./minilm-runtime.js";
import type { SentenceEncoderLoader } from "./use-lite-encoder.js";

/**
 * How to start the host's program. From `dist/` it is the compiled JavaScript beside this file, run
 * as it is. From `src/` (vitest, tsx scripts) it is the TypeScript beside this file, run through tsx
 * (a dev dependency, there whenever `src/` runs), so a test never needs `npm run build` first nor
 * runs a stale `dist/`. A child takes tsx with `--import`; a worker thread does not apply a loader
 * given that way (tsx registers its hooks on the main thread only), so it registers tsx itself and
 * then imports the program.
 */
interface HostProgram {
  readonly file: string;
  readonly childExecArgv: string[];
  readonly worker: (workerData: unknown) => Worker;
}

function hostProgram(): HostProgram {
  const compiled = new URL("./minilm-host-main.js", import.meta.url);
  if (existsSync(fileURLToPath(compiled))) {
    return {
      file: fileURLToPath(compiled),
      childExecArgv: [],
      worker: (workerData) => new Worker(compiled, { name: "minilm-encoder", workerData }),
    };
  }
  const source = new URL("./minilm-host-main.ts", import.meta.url);
  const start = `import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))})
    .then(({ register }) => { register(); return import(${JSON.stringify(source.href)}); })`;
  return {
    file: fileURLToPath(source),
    childExecArgv: ["--import", import.meta.resolve("tsx")],
    worker: (workerData) => new Worker(start, { eval: true, name: "minilm-encoder", workerData }),
  };
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
    if (runtime === "wasm") return startEncoder(workerChannel(program.worker({ runtime })));
    const child = fork(program.file, [runtime], {
      // Not this process's flags (a test runner's loaders, an inspector port): only what the program needs.
      execArgv: program.childExecArgv,
      stdio: ["ignore", "ignore", "inherit", "ipc"],
      serialization: "advanced",
    });
    return startEncoder(processChannel(child));
  };
