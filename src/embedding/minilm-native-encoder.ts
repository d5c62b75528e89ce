import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { threadId } from "node:worker_threads";
import { miniLmGraph } from "./minilm-graph.js";
import { readMiniLmModel } from "./minilm-model.js";
import { writeOnnxModel } from "./onnx-model.js";
import { readSafetensorsRaw } from "./safetensors.js";
import type { SentenceEncoderLoader } from "./use-lite-encoder.js";

/**
 * all-MiniLM-L6-v2 run by ONNX Runtime's native CPU kernels (`onnxruntime-node`), from the same
 * weights and tokenizer as the WebAssembly encoder: the graph is written in memory from the
 * safetensors at load, nothing is downloaded or converted ahead of time. Its vectors
 * equal the WebAssembly encoder's to float rounding; a run takes a third of the time. `run` is
 * synchronous on the calling thread, and terminating a thread in the middle of one aborts the whole
 * process, so a service runs this in a child process (`miniLmLoader("native")`).
 * docs/routing.md#embedders.
 */
export const loadMiniLmNativeEncoder: SentenceEncoderLoader = async () => {
  // Imported here: a service on the WebAssembly runtime or another embedder never loads the addon.
  const [ort, model] = await Promise.all([import("onnxruntime-node"), readMiniLmModel()]);
  const session = await ort.InferenceSession.create(writeOnnxModel(miniLmGraph(readSafetensorsRaw(model.weightsPath), model.config)), {
    // One thread: a model run shares a small host with test runs and must not take every core.
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    graphOptimizationLevel: "all",
    executionMode: "sequential",
  });
  collectGarbageNow();
  const { tokenizer, maxTokens } = model;
  const hidden = model.config.hidden_size;

  const embed = async (texts: string[]): Promise<number[][]> => {
    const tokens = texts.map((text) => tokenizer.encode(text, maxTokens));
    const batch = tokens.length;
    const length = Math.max(...tokens.map((t) => t.length));
    const ids = new BigInt64Array(batch * length);
    // Padding positions get −1e9 before the softmax, so no real token attends to them.
    const bias = new Float32Array(batch * length).fill(-1e9);
    tokens.forEach((row, b) =>
      row.forEach((id, i) => {
        ids[b * length + i] = BigInt(id);
        bias[b * length + i] = 0;
      }),
    );
    const positions = BigInt64Array.from({ length }, (_, i) => BigInt(i));
    const outputs = await session.run({
      input_ids: new ort.Tensor("int64", ids, [batch, length]),
      position_ids: new ort.Tensor("int64", positions, [length]),
      attention_bias: new ort.Tensor("float32", bias, [batch, 1, 1, length]),
    });
    const states = outputs["last_hidden_state"]?.data;
    if (!(states instanceof Float32Array)) throw new Error("the MiniLM graph returned no last_hidden_state");
    // Mean pooling over each text's real tokens.
    return tokens.map((row, b) => {
      const pooled = new Array<number>(hidden).fill(0);
      for (let i = 0; i < row.length; i++) {
        const offset = (b * length + i) * hidden;
        for (let h = 0; h < hidden; h++) pooled[h] = (pooled[h] as number) + (states[offset + h] as number);
      }
      return pooled.map((sum) => sum / row.length);
    });
  };

  // The session is not documented as safe for concurrent runs: one at a time, in arrival order.
  let last: Promise<unknown> = Promise.resolve();
  return {
    embed: (texts) => {
      const result = last.then(() => embed(texts));
      last = result.catch(() => undefined);
      return result;
    },
    dispose: () => session.release(),
    threadId,
  };
};

/**
 * Frees the load's transient copies (the weights file, ≈ 45 MB, and the serialized model, ≈ 46 MB)
 * at once. Left to V8 they stay until some later collection, which an idle model thread may not
 * have for hours: measured, the service's resident size was ≈ 90 MB higher without this. The
 * idiom (expose `gc` to one new context, then hide it again) is the one Jest's leak detector uses.
 */
function collectGarbageNow(): void {
  setFlagsFromString("--expose-gc");
  try {
    // A runtime that ignores the flag has no `gc` there: the copies then go at V8's next collection.
    (runInNewContext('typeof gc === "function" ? gc : undefined') as (() => void) | undefined)?.();
  } finally {
    setFlagsFromString("--no-expose-gc");
  }
}
