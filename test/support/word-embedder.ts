import { createHash } from "node:crypto";
import type { Embedder } from "../../src/routing/index.js";

/** Bag-of-words vectors for unit tests: texts that share words point the same way; no model needed. */
export class WordEmbedder implements Embedder {
  readonly modelId = "test-words";
  readonly dimensions = 64;
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((text) => {
      const vector = new Float32Array(this.dimensions);
      for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
        const slot = createHash("sha256").update(word).digest().readUInt8(0) % this.dimensions;
        vector[slot] = (vector[slot] ?? 0) + 1;
      }
      const length = Math.hypot(...vector) || 1;
      return vector.map((v) => v / length);
    });
  }
}
