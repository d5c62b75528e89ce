import * as ort from "onnxruntime-node";
import { describe, expect, it } from "vitest";
import { littleEndianBytes, OnnxType, writeOnnxModel } from "./onnx-model.js";

describe("writeOnnxModel", () => {
  it("writes a model ONNX Runtime loads and runs: initializers, symbolic dimensions, int, int-list and float attributes", async () => {
    const model = writeOnnxModel({
      name: "affine-then-normalize",
      opsetVersion: 17,
      inputs: [{ name: "x", type: OnnxType.float, dims: ["batch", 2] }],
      outputs: [{ name: "y", type: OnnxType.float, dims: ["batch", 2] }],
      initializers: [
        { name: "w", type: OnnxType.float, dims: [2, 2], bytes: littleEndianBytes(Float32Array.from([1, 2, 3, 4])) },
        { name: "shape", type: OnnxType.int64, dims: [2], bytes: littleEndianBytes(BigInt64Array.from([0n, 2n])) },
        { name: "scale", type: OnnxType.float, dims: [2], bytes: littleEndianBytes(Float32Array.from([1, 1])) },
        { name: "bias", type: OnnxType.float, dims: [2], bytes: littleEndianBytes(Float32Array.from([0, 10])) },
      ],
      nodes: [
        { op: "MatMul", inputs: ["x", "w"], outputs: ["xw"] },
        { op: "Transpose", inputs: ["xw"], outputs: ["t"], attributes: { perm: [1, 0] } },
        { op: "Transpose", inputs: ["t"], outputs: ["back"], attributes: { perm: [1, 0] } },
        { op: "Reshape", inputs: ["back", "shape"], outputs: ["r"] },
        {
          op: "LayerNormalization",
          inputs: ["r", "scale", "bias"],
          outputs: ["y"],
          attributes: { axis: -1, epsilon: { float: 1e-12 } },
        },
      ],
    });
    const session = await ort.InferenceSession.create(model);
    try {
      const { y } = await session.run({ x: new ort.Tensor("float32", Float32Array.from([1, 0, 0, 1]), [2, 2]) });
      // Rows [1, 2] and [3, 4], each normalized to [−1, 1], then shifted by the bias [0, 10].
      expect(Array.from(y?.data as Float32Array).map((v) => Math.round(v * 1e4) / 1e4)).toEqual([-1, 11, -1, 11]);
      expect(y?.dims).toEqual([2, 2]);
    } finally {
      await session.release();
    }
  });
});
