import { execFileSync, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmbedder } from "@lat.md/embed";
import { eventually } from "../../test/support/poll.js";
import { MiniLmEmbedder } from "./minilm-embedder.js";
import { MINILM_DIMENSIONS, MINILM_MODEL_PACKAGE } from "./minilm-model.js";
import type { MiniLmRuntime } from "./minilm-runtime.js";
import { dot } from "./unit-vector.js";

const SENTENCES = [
  "find movies by an actor",
  "Search for a person, and list their film credits!",
  "tmdb get movie movie id credits: Get the cast and crew for a movie.",
  "getWeatherForecast PDF_URLTool spotify_put_me_player_shuffle",
  "résumé naïve café — ünïcödé 🙂 東京の天気",
  "",
  "a".repeat(150),
  `${"a much longer description of a skill that reads a CSV file and groups rows by a column ".repeat(20)}`,
];

/** Where each runtime's loader lives, for the offline proof (a fresh process imports it by path). */
const LOADERS: Record<MiniLmRuntime, { file: string; name: string }> = {
  native: { file: "./minilm-native-encoder.ts", name: "loadMiniLmNativeEncoder" },
  wasm: { file: "./minilm-wasm-encoder.ts", name: "loadMiniLmWasmEncoder" },
};

let reference: number[][];

beforeAll(async () => {
  // @lat.md/embed runs the same weights through Hugging Face's candle (Rust, compiled to
  // WebAssembly) and its tokenizers crate: an independent implementation of both halves.
  const { default: manifest } = (await import(MINILM_MODEL_PACKAGE)) as { default: Parameters<typeof createEmbedder>[0]["model"] };
  reference = await (await createEmbedder({ model: manifest })).embed(SENTENCES);
});

describe.each(["native", "wasm"] as const)("MiniLmEmbedder (all-MiniLM-L6-v2, offline), %s runtime", (runtime) => {
  let embedder: MiniLmEmbedder;

  beforeAll(() => {
    embedder = new MiniLmEmbedder({ runtime });
  });

  afterAll(async () => {
    await embedder.close();
  });

  it("matches the reference implementation's vectors (tokenizer and forward pass), text by text", async () => {
    const actual = await embedder.embed(SENTENCES);
    expect(actual).toHaveLength(SENTENCES.length);
    actual.forEach((vector, i) => {
      expect(vector.length).toBe(MINILM_DIMENSIONS);
      expect(dot(vector, Float32Array.from(reference[i] as number[]))).toBeGreaterThan(0.999);
    });
  });

  it("runs the model apart from the event loop, on the runtime asked for, and gives one unit vector per text, whatever the batch", async () => {
    const [alone] = await embedder.embed(["get the weather forecast for a city"]);
    const batch = await embedder.embed(["x", "get the weather forecast for a city", SENTENCES[7] as string]);
    expect(embedder.encoderThreadId).toBeGreaterThan(0);
    // No silent fallback on this platform: the native runtime is the one that answered, in a process of its own.
    expect(embedder.encoderRuntime).toEqual({
      runtime,
      fallbackReason: undefined,
      isolation: runtime === "native" ? "child-process" : "worker-thread",
    });
    expect(dot(alone as Float32Array, batch[1] as Float32Array)).toBeGreaterThan(0.9999);
    for (const vector of batch) expect(Math.sqrt(dot(vector, vector))).toBeCloseTo(1, 5);
    expect(embedder.modelId).toMatch(/^minilm-l6-v2@\d+\.\d+\.\d+/);
  });

  it("puts related sentences closer than unrelated ones", async () => {
    const [weather, forecast, email] = await embedder.embed([
      "what's the weather in Paris tomorrow",
      "get the weather forecast for a city",
      "send an email to a contact",
    ]);
    expect(dot(weather as Float32Array, forecast as Float32Array)).toBeGreaterThan(
      dot(weather as Float32Array, email as Float32Array) + 0.2,
    );
  });

  it("loads and embeds with no network at all (a process in a network namespace of its own, no interfaces up)", () => {
    const loader = LOADERS[runtime];
    const script = `
      const { ${loader.name} } = await import(${JSON.stringify(fileURLToPath(new URL(loader.file, import.meta.url)))});
      const encoder = await ${loader.name}();
      const [vector] = await encoder.embed(["offline"]);
      await encoder.dispose();
      const { networkInterfaces } = await import("node:os");
      console.log(JSON.stringify({ dims: vector.length, interfaces: Object.keys(networkInterfaces()) }));`;
    let output: string;
    try {
      output = execFileSync("unshare", ["--net", "--", process.execPath, "--import", "tsx", "--input-type=module", "-e", script], {
        encoding: "utf8",
        cwd: fileURLToPath(new URL("../..", import.meta.url)),
      });
    } catch (error) {
      const stderr = (error as { stderr?: string }).stderr ?? "";
      if (/unshare failed|Operation not permitted/.test(stderr)) {
        throw new Error("this test needs unshare --net (util-linux, as root): the offline proof runs in a network namespace", {
          cause: error,
        });
      }
      throw error;
    }
    // No interface with an address: not even loopback is up, so any download would have failed.
    expect(JSON.parse(output.trim().split("\n").at(-1) as string)).toEqual({ dims: MINILM_DIMENSIONS, interfaces: [] });
  });
});

describe("the two MiniLM runtimes", () => {
  it("survives its native model's process being killed: the next call loads a new one", async () => {
    const embedder = new MiniLmEmbedder({ runtime: "native" });
    try {
      const [before] = await embedder.embed(["get the weather forecast for a city"]);
      const pid = embedder.encoderThreadId as number;
      process.kill(pid, "SIGKILL");
      // A call sent before the parent has seen the host die fails (EmbedderError); once it has, the
      // next call loads a new host (a model load: seconds on a loaded machine).
      await eventually(
        "a call answered by a new native model host",
        async () => ((await embedder.embed(["get the weather forecast for a city"])).length === 1 ? true : undefined),
        { timeoutMs: 60_000 },
      );
      const [after] = await embedder.embed(["get the weather forecast for a city"]);
      expect(embedder.encoderThreadId).not.toBe(pid);
      expect(dot(before as Float32Array, after as Float32Array)).toBeGreaterThan(0.99999);
    } finally {
      await embedder.close();
    }
  });

  it.each([
    ["exits", "process.exit(7)", 7],
    ["closes the embedder, then exits", "embedder.close().then(() => process.exit(8))", 8],
  ])(
    "lets the service end as it chose while a native model run is in flight: it %s",
    (_, end, code) => {
      // A process that keeps the model busy and ends in the middle of a run. With ONNX Runtime in a
      // worker thread this was SIGABRT ("terminate called after throwing an instance of
      // 'Napi::Error'"), whatever exit code the service asked for. It ends once the model's process
      // has spent CPU time on the busy batches while none of them has come back: a run is in flight
      // then, whatever the machine's load (a fixed delay could end before the host starts, or after it finished).
      const script = `
      const { readFileSync, writeSync } = await import("node:fs");
      const { MiniLmEmbedder } = await import(${JSON.stringify(fileURLToPath(new URL("./minilm-embedder.ts", import.meta.url)))});
      const embedder = new MiniLmEmbedder({ runtime: "native" });
      await embedder.embed(["load"]);
      const hostCpuTicks = () => {
        const fields = readFileSync("/proc/" + embedder.encoderThreadId + "/stat", "utf8").split(") ")[1].split(" ");
        return Number(fields[11]) + Number(fields[12]);
      };
      const idle = hostCpuTicks();
      let answered = 0;
      for (let i = 0; i < 3; i++) {
        const busy = Array.from({ length: 64 }, (_, j) => ("a long sentence to keep the model busy, batch " + i + " number " + j + ". ").repeat(8));
        void embedder.embed(busy).then(() => answered++, () => undefined);
      }
      const watch = setInterval(() => {
        if (hostCpuTicks() - idle < 3) return;
        clearInterval(watch);
        writeSync(1, JSON.stringify({ hostBusy: true, answered }) + "\\n");
        ${end};
      }, 5);`;
      const result = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
        encoding: "utf8",
        cwd: fileURLToPath(new URL("../..", import.meta.url)),
        timeout: 120_000,
      });
      expect({ status: result.status, signal: result.signal, stderr: result.stderr, stdout: result.stdout }).toEqual({
        status: code,
        signal: null,
        stderr: "",
        stdout: `${JSON.stringify({ hostBusy: true, answered: 0 })}\n`,
      });
    },
    130_000,
  );

  it("give the same vectors to float rounding, so they share one model id and one embedding cache", async () => {
    const native = new MiniLmEmbedder({ runtime: "native" });
    const wasm = new MiniLmEmbedder({ runtime: "wasm" });
    try {
      expect(native.modelId).toBe(wasm.modelId);
      const [a, b] = await Promise.all([native.embed(SENTENCES), wasm.embed(SENTENCES)]);
      a.forEach((vector, i) => expect(dot(vector, b[i] as Float32Array)).toBeGreaterThan(0.99999));
    } finally {
      await Promise.all([native.close(), wasm.close()]);
    }
  });
});
