import type { BertConfig } from "./minilm-model.js";
import type { Float32Tensor } from "./safetensors.js";
import { OnnxType, type OnnxGraph, type OnnxInitializer, type OnnxNode } from "./onnx-model.js";

/**
 * all-MiniLM-L6-v2's forward pass as an ONNX graph, from the same safetensors weights and config
 * the TensorFlow.js encoder reads: the same computation (BERT embeddings, six post-norm encoder
 * layers with exact GELU), so the same vectors to float rounding. Mean pooling stays outside the
 * graph (the caller knows which tokens are real).
 *
 * Inputs: `input_ids` int64 [batch, tokens], `position_ids` int64 [tokens] (0…tokens−1),
 * `attention_bias` float [batch, 1, 1, tokens] (0 for a real token, −1e9 for padding).
 * Output: `last_hidden_state` float [batch, tokens, hidden].
 */

const LAYER_NORM_EPSILON = 1e-12;
/** LayerNormalization is an ONNX operator from opset 17 on. */
const OPSET = 17;

export function miniLmGraph(weights: ReadonlyMap<string, Float32Tensor>, config: BertConfig): OnnxGraph {
  const hidden = config.hidden_size;
  const heads = config.num_attention_heads;
  const headSize = hidden / heads;
  const initializers: OnnxInitializer[] = [];
  const nodes: OnnxNode[] = [];
  let counter = 0;

  const tensor = (name: string): Float32Tensor => {
    const found = weights.get(name);
    if (found === undefined) throw new Error(`the MiniLM weights have no tensor ${name}`);
    return found;
  };
  const constant = (name: string, dims: readonly number[], data: Float32Array | BigInt64Array): string => {
    initializers.push({ name, type: data instanceof Float32Array ? OnnxType.float : OnnxType.int64, dims, data });
    return name;
  };
  const weight = (name: string): string => constant(name, tensor(name).shape, tensor(name).values);
  /** Dense kernels are stored [out, in]; the graph multiplies by [in, out]. */
  const transposedWeight = (name: string): string => {
    const { shape, values } = tensor(name);
    const [rows, columns] = shape as [number, number];
    const transposed = new Float32Array(values.length);
    for (let r = 0; r < rows; r++) for (let c = 0; c < columns; c++) transposed[c * rows + r] = values[r * columns + c] as number;
    return constant(`${name}.T`, [columns, rows], transposed);
  };
  const op = (type: string, inputs: readonly string[], attributes?: OnnxNode["attributes"]): string => {
    const output = `${type.toLowerCase()}_${counter++}`;
    nodes.push({ op: type, inputs, outputs: [output], ...(attributes === undefined ? {} : { attributes }) });
    return output;
  };

  const scalar = (name: string, value: number): string => constant(name, [], new Float32Array([value]));
  const headsShape = constant("shape.heads", [4], new BigInt64Array([0n, 0n, BigInt(heads), BigInt(headSize)]));
  const hiddenShape = constant("shape.hidden", [3], new BigInt64Array([0n, 0n, BigInt(hidden)]));
  const attentionScale = scalar("attention.scale", 1 / Math.sqrt(headSize));
  const half = scalar("gelu.half", 0.5);
  const one = scalar("gelu.one", 1);
  const rootTwo = scalar("gelu.sqrt2", Math.SQRT2);

  const dense = (x: string, prefix: string): string =>
    op("Add", [op("MatMul", [x, transposedWeight(`${prefix}.weight`)]), weight(`${prefix}.bias`)]);
  const layerNorm = (x: string, prefix: string): string =>
    op("LayerNormalization", [x, weight(`${prefix}.weight`), weight(`${prefix}.bias`)], {
      axis: -1,
      epsilon: { float: LAYER_NORM_EPSILON },
    });
  const splitHeads = (x: string, perm: readonly number[]): string => op("Transpose", [op("Reshape", [x, headsShape])], { perm });

  // Every sequence is one segment, so the token-type row 0 is folded into the position table.
  const positions = tensor("embeddings.position_embeddings.weight");
  const tokenType = tensor("embeddings.token_type_embeddings.weight").values;
  const positionTable = positions.values.map((value, i) => value + (tokenType[i % hidden] as number));
  let x = op("Add", [
    op("Gather", [weight("embeddings.word_embeddings.weight"), "input_ids"]),
    op("Gather", [constant("embeddings.position_and_type", positions.shape, positionTable), "position_ids"]),
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
