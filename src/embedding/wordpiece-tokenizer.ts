import { readFileSync } from "node:fs";

/** BERT's special token ids, as every uncased BERT vocabulary numbers them. */
const UNKNOWN = "[UNK]";
const CLASSIFY = "[CLS]";
const SEPARATOR = "[SEP]";
/** A word longer than this is one unknown token (BERT's `max_input_chars_per_word`). */
const MAX_CHARS_PER_WORD = 100;
const CONTINUATION = "##";

/**
 * The uncased BERT tokenizer (`BertNormalizer` + `BertPreTokenizer` + `WordPiece`), as the
 * `tokenizer.json` of a sentence-transformers model describes it: clean control characters, space
 * out CJK ideographs, lowercase, strip accents, split on whitespace and punctuation, then greedy
 * longest-match word pieces ("##" marks a continuation). Written out rather than taken from a
 * library because the maintained JavaScript tokenizers come bundled with an ONNX runtime whose
 * install script downloads binaries; this one is checked against the reference implementation's
 * embeddings in `minilm-embedder.test.ts`.
 */
export class WordPieceTokenizer {
  private readonly unknownId: number;
  private readonly classifyId: number;
  private readonly separatorId: number;

  private constructor(private readonly vocabulary: ReadonlyMap<string, number>) {
    this.unknownId = this.idOf(UNKNOWN);
    this.classifyId = this.idOf(CLASSIFY);
    this.separatorId = this.idOf(SEPARATOR);
  }

  /** Reads the vocabulary of a Hugging Face `tokenizer.json` whose model is WordPiece. */
  static fromTokenizerJson(file: string): WordPieceTokenizer {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as { model?: { type?: string; vocab?: Record<string, number> } };
    if (parsed.model?.type !== "WordPiece" || parsed.model.vocab === undefined) {
      throw new Error(`${file} does not describe a WordPiece tokenizer`);
    }
    return new WordPieceTokenizer(new Map(Object.entries(parsed.model.vocab)));
  }

  /** `[CLS] pieces… [SEP]`, cut to `maxTokens` ids in all (the model's sequence limit). */
  encode(text: string, maxTokens: number): number[] {
    const ids = [this.classifyId];
    for (const word of preTokenize(normalize(text))) {
      if (ids.length >= maxTokens - 1) break;
      ids.push(...this.wordPieces(word));
    }
    const cut = ids.slice(0, maxTokens - 1);
    cut.push(this.separatorId);
    return cut;
  }

  private wordPieces(word: string): number[] {
    const chars = [...word];
    if (chars.length > MAX_CHARS_PER_WORD) return [this.unknownId];
    const pieces: number[] = [];
    let start = 0;
    while (start < chars.length) {
      let end = chars.length;
      let found: number | undefined;
      while (start < end) {
        const piece = (start > 0 ? CONTINUATION : "") + chars.slice(start, end).join("");
        found = this.vocabulary.get(piece);
        if (found !== undefined) break;
        end -= 1;
      }
      // One piece that matches nothing makes the whole word unknown, as BERT does.
      if (found === undefined) return [this.unknownId];
      pieces.push(found);
      start = end;
    }
    return pieces;
  }

  private idOf(token: string): number {
    const id = this.vocabulary.get(token);
    if (id === undefined) throw new Error(`the vocabulary has no ${token} token`);
    return id;
  }
}

/** BertNormalizer with clean_text, handle_chinese_chars, lowercase and (following lowercase) strip_accents. */
function normalize(text: string): string {
  let out = "";
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    if (code === 0 || code === 0xfffd) continue;
    if (char === "\t" || char === "\n" || char === "\r" || /\s/u.test(char)) {
      out += " ";
      continue;
    }
    if (/[\p{Cc}\p{Cf}]/u.test(char)) continue;
    out += isCjkIdeograph(code) ? ` ${char} ` : char;
  }
  return out
    .toLowerCase()
    .normalize("NFD")
    .replace(/\p{Mn}/gu, "");
}

/** BertPreTokenizer: whitespace-separated words, each punctuation character a word of its own. */
function preTokenize(text: string): string[] {
  const words: string[] = [];
  for (const chunk of text.split(" ")) {
    let current = "";
    for (const char of chunk) {
      if (isPunctuation(char)) {
        if (current !== "") words.push(current);
        words.push(char);
        current = "";
      } else current += char;
    }
    if (current !== "") words.push(current);
  }
  return words;
}

/** BERT counts every non-alphanumeric ASCII symbol as punctuation, besides Unicode's P categories. */
function isPunctuation(char: string): boolean {
  const code = char.codePointAt(0) as number;
  if ((code >= 33 && code <= 47) || (code >= 58 && code <= 64) || (code >= 91 && code <= 96) || (code >= 123 && code <= 126)) return true;
  return /\p{P}/u.test(char);
}

function isCjkIdeograph(code: number): boolean {
  return (
    (code >= 0x4e00 && code <= 0x9fff) ||
    (code >= 0x3400 && code <= 0x4dbf) ||
    (code >= 0x20000 && code <= 0x2a6df) ||
    (code >= 0x2a700 && code <= 0x2b73f) ||
    (code >= 0x2b740 && code <= 0x2b81f) ||
    (code >= 0x2b820 && code <= 0x2ceaf) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0x2f800 && code <= 0x2fa1f)
  );
}
