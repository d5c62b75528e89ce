/**
 * What a routed tool costs an LLM's context, per hardening level (docs/routing.md#hardened-descriptions):
 * for every tool of a dataset (`tools.jsonl`, default `../shared/bench`), the tokens of its description and
 * of its whole tool definition in each API's shape, counted with OpenAI's cl100k_base and o200k_base
 * encodings (gpt-tokenizer, the same BPE tables as tiktoken). Anthropic's tokenizer is not published;
 * these counts are an estimate for it. Pure computation: no service is started.
 *
 *     npm run bench:tool-tokens [dataset-dir]
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { encode as encodeCl100k } from "gpt-tokenizer/encoding/cl100k_base";
import { encode as encodeO200k } from "gpt-tokenizer/encoding/o200k_base";
import { type Hardening, instructionsText, toolDefinition, toolDescription } from "../src/routing/index.js";

const dir = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, "..", "..", "shared", "bench"));
const tools = readFileSync(path.join(dir, "tools.jsonl"), "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => JSON.parse(line) as { name: string; description: string; parameters?: unknown });

const encoders = { cl100k_base: encodeCl100k, o200k_base: encodeO200k } as const;
const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);

console.log(`${tools.length} tools from ${dir}; mean tokens per tool\n`);
console.log("| encoding | hardening | description | added to the description | OpenAI tool JSON | Anthropic tool JSON |");
console.log("|---|---|---|---|---|---|");
for (const [encoding, encode] of Object.entries(encoders)) {
  const count = (text: string): number => encode(text).length;
  const bare = tools.map((t) => count(t.description.trim()));
  for (const hardening of ["none", "short", "full"] as Hardening[]) {
    const rows = tools.map((t) => {
      const schema = JSON.stringify(t.parameters ?? { type: "object" });
      const description = toolDescription(t.name, t.description, schema, hardening);
      return {
        description: count(description),
        openai: count(JSON.stringify(toolDefinition("openai", t.name, description, schema))),
        anthropic: count(JSON.stringify(toolDefinition("anthropic", t.name, description, schema))),
      };
    });
    const descriptions = rows.map((r) => r.description);
    console.log(
      `| ${encoding} | ${hardening} | ${mean(descriptions).toFixed(1)} | ${(mean(descriptions) - mean(bare)).toFixed(1)} | ` +
        `${mean(rows.map((r) => r.openai)).toFixed(1)} | ${mean(rows.map((r) => r.anthropic)).toFixed(1)} |`,
    );
  }
  const instructions = tools.map((t) => count(instructionsText(t.name, t.description)));
  console.log(
    `| ${encoding} | (instructions text) | ${mean(instructions).toFixed(1)} | ${(mean(instructions) - mean(bare)).toFixed(1)} | – | – |`,
  );
}
