import protobuf from "protobufjs";

/**
 * Writes ONNX models (the `onnx.ModelProto` protobuf) from a graph described in our own terms, so a
 * model whose weights ship as safetensors can be run by ONNX Runtime without a converter, a Python
 * toolchain or a `.onnx` file in the repository. Only the part of `onnx.proto` that a plain
 * inference graph needs is declared below; the field numbers are ONNX's own.
 */

/** Element types this writer stores (ONNX `TensorProto.DataType` values). */
export const OnnxType = { float: 1, int64: 7, float16: 10 } as const;
type OnnxTypeCode = (typeof OnnxType)[keyof typeof OnnxType];

/** A constant of the graph (a weight, a shape). */
export interface OnnxInitializer {
  readonly name: string;
  readonly type: OnnxTypeCode;
  readonly dims: readonly number[];
  /** The elements, little-endian (a weights file's bytes as they are, or {@link littleEndianBytes}). */
  readonly bytes: Uint8Array;
}

/** One operator call. Attributes are ints, int lists or floats, which is all the graphs here use. */
export interface OnnxNode {
  readonly op: string;
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  readonly attributes?: Readonly<Record<string, number | readonly number[] | { readonly float: number }>>;
}

/** A graph input or output; a string dimension is symbolic (e.g. "batch"). */
export interface OnnxValue {
  readonly name: string;
  readonly type: OnnxTypeCode;
  readonly dims: readonly (number | string)[];
}

export interface OnnxGraph {
  readonly name: string;
  readonly opsetVersion: number;
  readonly inputs: readonly OnnxValue[];
  readonly outputs: readonly OnnxValue[];
  readonly initializers: readonly OnnxInitializer[];
  readonly nodes: readonly OnnxNode[];
}

/** ONNX IR version 8 (opsets up to 18). */
const IR_VERSION = 8;
const ATTRIBUTE_FLOAT = 1;
const ATTRIBUTE_INT = 2;
const ATTRIBUTE_INTS = 7;

const schema = protobuf.Root.fromJSON({
  nested: {
    onnx: {
      nested: {
        ModelProto: {
          fields: {
            irVersion: { id: 1, type: "int64" },
            producerName: { id: 2, type: "string" },
            graph: { id: 7, type: "GraphProto" },
            opsetImport: { id: 8, type: "OperatorSetIdProto", rule: "repeated" },
          },
        },
        OperatorSetIdProto: { fields: { domain: { id: 1, type: "string" }, version: { id: 2, type: "int64" } } },
        GraphProto: {
          fields: {
            node: { id: 1, type: "NodeProto", rule: "repeated" },
            name: { id: 2, type: "string" },
            initializer: { id: 5, type: "TensorProto", rule: "repeated" },
            input: { id: 11, type: "ValueInfoProto", rule: "repeated" },
            output: { id: 12, type: "ValueInfoProto", rule: "repeated" },
          },
        },
        NodeProto: {
          fields: {
            input: { id: 1, type: "string", rule: "repeated" },
            output: { id: 2, type: "string", rule: "repeated" },
            name: { id: 3, type: "string" },
            opType: { id: 4, type: "string" },
            attribute: { id: 5, type: "AttributeProto", rule: "repeated" },
          },
        },
        AttributeProto: {
          fields: {
            name: { id: 1, type: "string" },
            f: { id: 2, type: "float" },
            i: { id: 3, type: "int64" },
            ints: { id: 8, type: "int64", rule: "repeated" },
            type: { id: 20, type: "int32" },
          },
        },
        TensorProto: {
          fields: {
            dims: { id: 1, type: "int64", rule: "repeated" },
            dataType: { id: 2, type: "int32" },
            name: { id: 8, type: "string" },
            rawData: { id: 9, type: "bytes" },
          },
        },
        ValueInfoProto: { fields: { name: { id: 1, type: "string" }, type: { id: 2, type: "TypeProto" } } },
        TypeProto: { fields: { tensorType: { id: 1, type: "TypeProtoTensor" } } },
        TypeProtoTensor: { fields: { elemType: { id: 1, type: "int32" }, shape: { id: 2, type: "TensorShapeProto" } } },
        TensorShapeProto: { fields: { dim: { id: 1, type: "Dimension", rule: "repeated" } } },
        Dimension: { fields: { dimValue: { id: 1, type: "int64" }, dimParam: { id: 2, type: "string" } } },
      },
    },
  },
});
const ModelProto = schema.lookupType("onnx.ModelProto");

/** The serialized `onnx.ModelProto` of `graph`, ready for `InferenceSession.create`. */
export function writeOnnxModel(graph: OnnxGraph): Uint8Array {
  const model = {
    irVersion: IR_VERSION,
    producerName: "skill-engine",
    opsetImport: [{ domain: "", version: graph.opsetVersion }],
    graph: {
      name: graph.name,
      node: graph.nodes.map((node, index) => ({
        input: node.inputs,
        output: node.outputs,
        name: `${node.op}_${index}`,
        opType: node.op,
        attribute: Object.entries(node.attributes ?? {}).map(([name, value]) => attribute(name, value)),
      })),
      initializer: graph.initializers.map((tensor) => ({
        name: tensor.name,
        dims: tensor.dims,
        dataType: tensor.type,
        rawData: tensor.bytes,
      })),
      input: graph.inputs.map(valueInfo),
      output: graph.outputs.map(valueInfo),
    },
  };
  const problem = ModelProto.verify(model);
  if (problem !== null) throw new Error(`the ONNX model is malformed: ${problem}`);
  return ModelProto.encode(ModelProto.fromObject(model)).finish();
}

function attribute(name: string, value: number | readonly number[] | { readonly float: number }): object {
  if (typeof value === "number") return { name, type: ATTRIBUTE_INT, i: value };
  if ("float" in value) return { name, type: ATTRIBUTE_FLOAT, f: value.float };
  return { name, type: ATTRIBUTE_INTS, ints: value };
}

function valueInfo(value: OnnxValue): object {
  const dim = value.dims.map((d) => (typeof d === "number" ? { dimValue: d } : { dimParam: d }));
  return { name: value.name, type: { tensorType: { elemType: value.type, shape: { dim } } } };
}

/** ONNX raw data is little-endian whatever the host; typed arrays are in the host's order. */
export function littleEndianBytes(data: Float32Array | BigInt64Array): Uint8Array {
  const bytes = new Uint8Array(data.byteLength);
  const view = new DataView(bytes.buffer);
  if (data instanceof Float32Array) data.forEach((value, i) => view.setFloat32(i * 4, value, true));
  else data.forEach((value, i) => view.setBigInt64(i * 8, value, true));
  return bytes;
}
