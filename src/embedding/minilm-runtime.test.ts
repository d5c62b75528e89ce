import { describe, expect, it } from "vitest";
import { loadMiniLmRuntime } from "./minilm-runtime.js";
import type { SentenceEncoder, SentenceEncoderLoader } from "./use-lite-encoder.js";

const encoder = (name: string): SentenceEncoder => ({
  embed: () => Promise.resolve([[name.length]]),
  dispose: () => undefined,
  threadId: 0,
});
const loads =
  (name: string): SentenceEncoderLoader =>
  () =>
    Promise.resolve(encoder(name));
const fails =
  (message: string): SentenceEncoderLoader =>
  () =>
    Promise.reject(new Error(message));

describe("loadMiniLmRuntime", () => {
  it("loads the runtime asked for", async () => {
    const native = await loadMiniLmRuntime("native", { native: loads("native"), wasm: fails("not asked") });
    expect(native).toMatchObject({ runtime: "native" });
    expect(native.fallbackReason).toBeUndefined();
    expect(await loadMiniLmRuntime("wasm", { native: fails("not asked"), wasm: loads("wasm") })).toMatchObject({ runtime: "wasm" });
  });

  it("falls back to WebAssembly when the native addon cannot load, and says why", async () => {
    const loaded = await loadMiniLmRuntime("native", {
      native: fails("libonnxruntime.so.1: cannot open shared object file"),
      wasm: loads("wasm"),
    });
    expect(loaded.runtime).toBe("wasm");
    expect(loaded.fallbackReason).toMatch(/onnxruntime-node.*libonnxruntime\.so\.1: cannot open shared object file/);
  });

  it("fails when the runtime it would fall back to fails too, or when WebAssembly was asked for and fails", async () => {
    await expect(loadMiniLmRuntime("native", { native: fails("no addon"), wasm: fails("no wasm") })).rejects.toThrow(/no wasm/);
    await expect(loadMiniLmRuntime("wasm", { native: loads("native"), wasm: fails("no wasm") })).rejects.toThrow(/no wasm/);
  });
});
