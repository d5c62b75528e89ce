import path from "node:path";
import { fileURLToPath } from "node:url";
import { threadId } from "node:worker_threads";
import { readMiniLmModel } from "./minilm-model.js";
import { readSafetensors } from "./safetensors.js";
import type { SentenceEncoderLoader } from "./use-lite-encoder.js";

/**
 * all-MiniLM-L6-v2 run by TensorFlow.js on its WebAssembly backend (SIMD, one thread, no native
 * addon, no install script, nothing downloaded): the runtime for hosts where ONNX Runtime's addon
 * cannot load (docs/routing.md#embedders). Same weights and tokenizer as the native encoder.
 */

const LAYER_NORM_EPSILON = 1e-12;

/**
 * Loads the model into this thread (~0.5 s). Each model call then runs on the event loop (7 ms for
 * one word, ~17 ms for a skill description, on this project's 2-core machines), so a service runs
 * it in a worker thread (`miniLmLoader("wasm")`).
 */
export const loadMiniLmWasmEncoder: SentenceEncoderLoader = async () => {
  // Imported here, not at the top: a service configured for another embedder never pays for
  // TensorFlow.js, and the worker that runs this keeps it off the main thread.
  const [tf, wasm, model] = await Promise.all([
    import("@tensorflow/tfjs-core"),
    import("@tensorflow/tfjs-backend-wasm"),
    readMiniLmModel(),
  ]);
  // The backend reads its .wasm files from its own package directory, never from the network.
  wasm.setWasmPaths(`${path.dirname(fileURLToPath(import.meta.resolve("@tensorflow/tfjs-backend-wasm")))}/`);
  if (!(await tf.setBackend("wasm"))) throw new Error("the TensorFlow.js WebAssembly backend did not start");
  await tf.ready();

  const { config, tokenizer, maxTokens } = model;
  const weights = new Map<string, import("@tensorflow/tfjs-core").Tensor>();
  for (const [name, { shape, values }] of readSafetensors(model.weightsPath)) {
    const tensor = tf.tensor(values, [...shape]);
    // Dense kernels are stored [out, in]; kept as [in, out] so every product is a plain matMul,
    // which the WebAssembly backend runs ~10× faster than one with a transposed operand.
    if (name.startsWith("encoder.") && name.endsWith(".weight") && shape.length === 2) {
      weights.set(name, tf.transpose(tensor));
      tensor.dispose();
    } else weights.set(name, tensor);
  }
  const weight = (name: string): import("@tensorflow/tfjs-core").Tensor => {
    const tensor = weights.get(name);
    if (tensor === undefined) throw new Error(`the MiniLM weights have no tensor ${name}`);
    return tensor;
  };

  const hidden = config.hidden_size;
  const heads = config.num_attention_heads;
  const headSize = hidden / heads;
  type Tensor = import("@tensorflow/tfjs-core").Tensor;
  const dense = (x: Tensor, prefix: string): Tensor => tf.add(tf.matMul(x, weight(`${prefix}.weight`)), weight(`${prefix}.bias`));
  const layerNorm = (x: Tensor, prefix: string): Tensor => {
    const { mean, variance } = tf.moments(x, -1, true);
    const scaled = tf.div(tf.sub(x, mean), tf.sqrt(tf.add(variance, LAYER_NORM_EPSILON)));
    return tf.add(tf.mul(scaled, weight(`${prefix}.weight`)), weight(`${prefix}.bias`));
  };

  /** One forward pass over a padded batch; mean pooling over the real tokens. */
  const forward = (texts: readonly string[]): number[][] => {
    const tokens = texts.map((text) => tokenizer.encode(text, maxTokens));
    const batch = tokens.length;
    const length = Math.max(...tokens.map((t) => t.length));
    const ids = new Int32Array(batch * length);
    const mask = new Float32Array(batch * length);
    tokens.forEach((row, b) =>
      row.forEach((id, i) => {
        ids[b * length + i] = id;
        mask[b * length + i] = 1;
      }),
    );
    return tf.tidy(() => {
      const maskTensor = tf.tensor2d(mask, [batch, length]);
      let x: Tensor = tf.gather(weight("embeddings.word_embeddings.weight"), tf.tensor2d(ids, [batch, length], "int32"));
      x = tf.add(x, tf.slice(weight("embeddings.position_embeddings.weight"), [0, 0], [length, hidden]));
      x = tf.add(x, tf.slice(weight("embeddings.token_type_embeddings.weight"), [0, 0], [1, hidden]));
      x = tf.reshape(layerNorm(x, "embeddings.LayerNorm"), [batch * length, hidden]);
      // Padding positions get -1e9 before the softmax, so no real token attends to them.
      const attentionBias = tf.reshape(tf.mul(tf.sub(1, maskTensor), -1e9), [batch, 1, 1, length]);
      const splitHeads = (t: Tensor): Tensor => tf.transpose(tf.reshape(t, [batch, length, heads, headSize]), [0, 2, 1, 3]);
      for (let layer = 0; layer < config.num_hidden_layers; layer++) {
        const p = `encoder.layer.${layer}`;
        const query = splitHeads(dense(x, `${p}.attention.self.query`));
        const keyT = tf.transpose(splitHeads(dense(x, `${p}.attention.self.key`)), [0, 1, 3, 2]);
        const value = splitHeads(dense(x, `${p}.attention.self.value`));
        const scores = tf.add(tf.div(tf.matMul(query, keyT), Math.sqrt(headSize)), attentionBias);
        const context = tf.reshape(tf.transpose(tf.matMul(tf.softmax(scores), value), [0, 2, 1, 3]), [batch * length, hidden]);
        x = layerNorm(tf.add(x, dense(context, `${p}.attention.output.dense`)), `${p}.attention.output.LayerNorm`);
        const inner = dense(x, `${p}.intermediate.dense`);
        // BERT's exact GELU: 0.5·x·(1 + erf(x/√2)).
        const activated = tf.mul(tf.mul(inner, 0.5), tf.add(1, tf.erf(tf.div(inner, Math.SQRT2))));
        x = layerNorm(tf.add(x, dense(activated, `${p}.output.dense`)), `${p}.output.LayerNorm`);
      }
      const mask3 = tf.expandDims(maskTensor, -1);
      const pooled = tf.div(tf.sum(tf.mul(tf.reshape(x, [batch, length, hidden]), mask3), 1), tf.sum(mask3, 1));
      return pooled.arraySync() as number[][];
    });
  };

  // Model runs are synchronous, so they never interleave; the promise keeps the port's shape.
  return {
    embed: (texts) => {
      try {
        return Promise.resolve(forward(texts));
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
    },
    dispose: () => {
      for (const tensor of weights.values()) tensor.dispose();
      weights.clear();
    },
    threadId,
  };
};
