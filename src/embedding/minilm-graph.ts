import type { BertConfig } from "./minilm-model.js";
import { littleEndianBytes, OnnxType, type OnnxGraph, type OnnxInitializer, type OnnxNode } from "./onnx-model.js";
import type { RawTensor } from "./safetensors.js";

/**
 * all-MiniLM-L6-v2's forward pass as an ONNX graph, from the same safetensors weights and config
 * the WebAssembly encoder reads: the same computation (BERT embeddings, six post-norm encoder
 * layers with exact GELU), so the same vectors to float rounding. Mean pooling stays outside the
 * graph (the caller knows which tokens are real).
 *
 * The weights go in as the file stores them (fp16 bytes, not copied); the graph widens them with
 * `Cast` and puts dense kernels [out, in] as [in, out] with `Transpose`. Those nodes see only
 * constants, so ONNX Runtime folds them once when the session is created: no run pays for them,
 * and no float32 copy of the weights is ever made in JavaScript.
 *
 * Inputs: `input_ids` int64 [batch, tokens], `position_ids` int64 [tokens] (0…tokens−1),
 * `attention_bias` float [batch, 1, 1, tokens] (0 for a real token, −1e9 for padding).
 * Output: `last_hidden_state` float [batch, tokens, hidden].
 */

const LAYER_NORM_EPSILON = 1e-12;
/** LayerNormalization is an ONNX operator from opset 17 on. */
const OPSET = 17;
const STORED_TYPES: Readonly<Record<string, OnnxInitializer["type"]>> = { F16: OnnxType.float16, F32: OnnxType.float };

export function miniLmGraph(weights: ReadonlyMap<string, RawTensor>, config: BertConfig): OnnxGraph {
  const hidden = config.hidden_size;
  const heads = config.num_attention_heads;
  const headSize = hidden / heads;
  const initializers: OnnxInitializer[] = [];
  const nodes: OnnxNode[] = [];
  let counter = 0;

  const op = (type: string, inputs: readonly string[], attributes?: OnnxNode["attributes"]): string => {
    const output = `${type.toLowerCase()}_${counter++}`;
    nodes.push({ op: type, inputs, outputs: [output], ...(attributes === undefined ? {} : { attributes }) });
    return output;
  };
  const constant = (name: string, dims: readonly number[], data: Float32Array | BigInt64Array): string => {
    initializers.push({ name, type: data instanceof Float32Array ? OnnxType.float : OnnxType.int64, dims, bytes: littleEndianBytes(data) });
    return name;
  };
  /** A checkpoint tensor as float32, whatever the file stores. */
  const weight = (name: string): string => {
    const tensor = weights.get(name);
    if (tensor === undefined) throw new Error(`the MiniLM weights have no tensor ${name}`);
    const type = STORED_TYPES[tensor.dtype];
    if (type === undefined) throw new Error(`the MiniLM weight ${name} is ${tensor.dtype}, not F16 or F32`);
    initializers.push({ name, type, dims: tensor.shape, bytes: tensor.bytes });
    return type === OnnxType.float ? name : op("Cast", [name], { to: OnnxType.float });
  };
  /** Dense kernels are stored [out, in]; the graph multiplies by [in, out]. */
  const kernel = (name: string): string => op("Transpose", [weight(name)], { perm: [1, 0] });

  const scalar = (name: string, value: number): string => constant(name, [], new Float32Array([value]));
  const headsShape = constant("shape.heads", [4], new BigInt64Array([0n, 0n, BigInt(heads), BigInt(headSize)]));
  const hiddenShape = constant("shape.hidden", [3], new BigInt64Array([0n, 0n, BigInt(hidden)]));
  const attentionScale = scalar("attention.scale", 1 / Math.sqrt(headSize));
  const half = scalar("gelu.half", 0.5);
  const one = scalar("gelu.one", 1);
  const rootTwo = scalar("gelu.sqrt2", Math.SQRT2);

  const dense = (x: string, prefix: string): string => op("Add", [op("MatMul", [x, kernel(`${prefix}.weight`)]), weight(`${prefix}.bias`)]);
  const layerNorm = (x: string, prefix: string): string =>
    op("LayerNormalization", [x, weight(`${prefix}.weight`), weight(`${prefix}.bias`)], {
      axis: -1,
      epsilon: { float: LAYER_NORM_EPSILON },
    });
  const splitHeads = (x: string, perm: readonly number[]): string => op("Transpose", [op("Reshape", [x, headsShape])], { perm });

  // Every sequence is one segment: token type 0's row is added to every position (folded too).
  const firstTokenType = op("Gather", [
    weight("embeddings.token_type_embeddings.weight"),
    constant("token_type.zero", [], new BigInt64Array([0n])),
  ]);
  const positionTable = op("Add", [weight("embeddings.position_embeddings.weight"), firstTokenType]);
  let x = op("Add", [
    op("Gather", [weight("embeddings.word_embeddings.weight"), "input_ids"]),
    op("Gather", [positionTable, "position_ids"]),
  ]);
  x = layerNorm(x, "embeddings.LayerNorm");

  for (let layer = 0; layer < config.num_hidden_layers; layer++) {
    const p = `encoder.layer.${layer}`;
    const query = splitHeads(dense(x, `${p}.attention.self.query`), [0, 2, 1, 3]);
    const keyT = splitHeads(dense(x, `${p}.attention.self.key`), [0, 2, 3, 1]);
    const value = splitHeads(dense(x, `${p}.attention.self.value`), [0, 2, 1, 3]);
    const scores = op("Add", [op("Mul", [op("MatMul", [query, keyT]), attentionScale]), "attention_bias"]);
    const context = op("MatMul", [op("Softmax", [scores], { axis: -1 }), value]);
    const merged = op("Reshape", [op("Transpose", [context], { perm: [0, 2, 1, 3] }), hiddenShape]);
    x = layerNorm(op("Add", [x, dense(merged, `${p}.attention.output.dense`)]), `${p}.attention.output.LayerNorm`);
    const inner = dense(x, `${p}.intermediate.dense`);
    // BERT's exact GELU: 0.5·x·(1 + erf(x/√2)).
    const activated = op("Mul", [op("Mul", [inner, half]), op("Add", [op("Erf", [op("Div", [inner, rootTwo])]), one])]);
    x = layerNorm(op("Add", [x, dense(activated, `${p}.output.dense`)]), `${p}.output.LayerNorm`);
  }
  nodes.push({ op: "Identity", inputs: [x], outputs: ["last_hidden_state"] });

  return {
    name: "all-MiniLM-L6-v2",
    opsetVersion: OPSET,
    inputs: [
      { name: "input_ids", type: OnnxType.int64, dims: ["batch", "tokens"] },
      { name: "position_ids", type: OnnxType.int64, dims: ["tokens"] },
      { name: "attention_bias", type: OnnxType.float, dims: ["batch", 1, 1, "tokens"] },
    ],
    outputs: [{ name: "last_hidden_state", type: OnnxType.float, dims: ["batch", "tokens", hidden] }],
    initializers,
    nodes,
  };
}
