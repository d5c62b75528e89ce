import { errorMessage } from "../errors/index.js";
import { loadMiniLmNativeEncoder } from "./minilm-native-encoder.js";
import { loadMiniLmWasmEncoder } from "./minilm-wasm-encoder.js";
import type { SentenceEncoder, SentenceEncoderLoader } from "./use-lite-encoder.js";

/**
 * Which runtime computes all-MiniLM-L6-v2: ONNX Runtime's native CPU kernels (the default, about
 * 3× faster) or TensorFlow.js on WebAssembly (no native addon). Same weights, same vectors to
 * float rounding, so the same model id and the same cached embeddings (docs/routing.md#embedders).
 */
export type MiniLmRuntime = "native" | "wasm";

export const MINILM_RUNTIME_LOADERS: Readonly<Record<MiniLmRuntime, SentenceEncoderLoader>> = {
  native: loadMiniLmNativeEncoder,
  wasm: loadMiniLmWasmEncoder,
};

export interface LoadedRuntime {
  readonly encoder: SentenceEncoder;
  readonly runtime: MiniLmRuntime;
  /** Why `runtime` is not the preferred one; absent when it is. */
  readonly fallbackReason?: string;
}

/**
 * Loads the preferred runtime. When the native one cannot load (no ONNX Runtime build for this
 * platform, a missing shared library), the WebAssembly one is loaded instead and the answer says
 * why in `fallbackReason`: routing keeps working, slower, and the start-up log names the cause.
 */
export async function loadMiniLmRuntime(
  preferred: MiniLmRuntime,
  loaders: Readonly<Record<MiniLmRuntime, SentenceEncoderLoader>> = MINILM_RUNTIME_LOADERS,
): Promise<LoadedRuntime> {
  try {
    return { encoder: await loaders[preferred](), runtime: preferred };
  } catch (error) {
    if (preferred === "wasm") throw error;
    const fallbackReason = `the native MiniLM runtime (onnxruntime-node) could not load: ${errorMessage(error)}`;
    return { encoder: await loaders.wasm(), runtime: "wasm", fallbackReason };
  }
}
