import { createHash } from "node:crypto";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { exitMarkerPrefix, filesFramePrefix } from "./container-entry.js";
import { FilesFrameFilter } from "./files-frame-filter.js";
import { readOutputFiles } from "./output-files.js";

const NONCE = "4f1c0b9e-0000-4000-8000-000000000000";
const LIMITS = { spaceBytes: 64 << 20, maxFiles: 256, maxFileBytes: 1024, maxTotalBytes: 2048 };

/** What passes through to the next filter, as one buffer. */
function collector(): { sink: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk);
      callback();
    },
  });
  return { sink, text: () => Buffer.concat(chunks).toString("latin1") };
}

function frame(manifest: object, data: Buffer, nonce = NONCE): Buffer {
  const body = Buffer.from(JSON.stringify(manifest));
  return Buffer.concat([filesFramePrefix(nonce), Buffer.from(`${body.length}:${data.length}\x1e\0`, "latin1"), body, data]);
}

const sha = (bytes: Buffer): string => createHash("sha256").update(bytes).digest("hex");
const manifestOf = (files: { path: string; content: Buffer; size?: number; sha256?: string }[]) => ({
  files: files.map((f) => ({
    path: f.path,
    size: f.size ?? f.content.length,
    sha256: f.sha256 ?? sha(f.content),
    inline: f.content.length,
  })),
  skipped: [],
  skipped_count: 0,
  more: 0,
  full: false,
});

/** Writes `bytes` through a filter in chunks of `size`, as the attach stream may split them. */
async function feed(filter: FilesFrameFilter, bytes: Buffer, size: number): Promise<void> {
  for (let at = 0; at < bytes.length; at += size) {
    await new Promise<void>((resolve, reject) =>
      filter.write(bytes.subarray(at, at + size), (error) => (error ? reject(error) : resolve())),
    );
  }
  filter.flush();
}

describe("FilesFrameFilter", () => {
  const chart = { path: "out/chart.svg", content: Buffer.from("<svg/>") };
  const bytes = Buffer.concat([Buffer.from("before "), frame(manifestOf([chart]), chart.content), Buffer.from("after")]);

  for (const size of [1, 3, 7, 64, bytes.length]) {
    it(`takes the frame out of stdout split into chunks of ${size} bytes and passes the rest through`, async () => {
      const out = collector();
      const filter = new FilesFrameFilter(NONCE, out.sink, LIMITS.maxTotalBytes);
      await feed(filter, bytes, size);
      expect(out.text()).toBe("before after");
      const read = readOutputFiles(filter.frame(), LIMITS);
      expect(read.files).toEqual([
        {
          path: "out/chart.svg",
          sizeBytes: 6,
          sha256: sha(chart.content),
          content: chart.content,
          truncated: false,
          mediaType: "image/svg+xml",
        },
      ]);
      expect(read.warnings).toEqual([]);
    });
  }

  it("passes another nonce's frame, and a prefix without a header, through as ordinary output", async () => {
    const out = collector();
    const filter = new FilesFrameFilter(NONCE, out.sink, LIMITS.maxTotalBytes);
    const foreign = frame(manifestOf([]), Buffer.alloc(0), "another-nonce");
    const broken = Buffer.concat([filesFramePrefix(NONCE), Buffer.from("not a header at all, and long enough to say so")]);
    await feed(filter, Buffer.concat([foreign, broken]), 5);
    expect(out.text()).toBe(Buffer.concat([foreign, broken]).toString("latin1"));
    expect(filter.frame()).toBeUndefined();
  });

  it("drops a frame that claims more data than may come back inline, keeping none of it", async () => {
    const out = collector();
    const filter = new FilesFrameFilter(NONCE, out.sink, LIMITS.maxTotalBytes);
    const data = Buffer.alloc(4096, 1);
    await feed(filter, Buffer.concat([frame(manifestOf([{ path: "a", content: data }]), data), Buffer.from("tail")]), 100);
    expect(out.text()).toBe("tail");
    expect(filter.frame()).toEqual({ kind: "oversized", manifestBytes: expect.any(Number), dataBytes: 4096 });
    expect(readOutputFiles(filter.frame(), LIMITS).warnings[0]).toMatch(/claimed 4096 bytes, more than the 2048 returned inline/);
  });

  it("passes the exit marker on at once, never holding its last bytes back (the run would wait for the container's exit)", async () => {
    const out = collector();
    const filter = new FilesFrameFilter(NONCE, out.sink, LIMITS.maxTotalBytes);
    const marker = Buffer.concat([exitMarkerPrefix(NONCE), Buffer.from("0\x1e\0", "latin1")]);
    const bytes = Buffer.concat([Buffer.from("result\n"), marker]);
    await new Promise<void>((resolve) => filter.write(bytes, () => resolve()));
    expect(out.text()).toBe(bytes.toString("latin1"));
  });

  it("holds back only an end that could begin a frame's prefix", async () => {
    const out = collector();
    const filter = new FilesFrameFilter(NONCE, out.sink, LIMITS.maxTotalBytes);
    await new Promise<void>((resolve) => filter.write(Buffer.from("ordinary output\n"), () => resolve()));
    expect(out.text()).toBe("ordinary output\n");
  });

  it("keeps the last frame when a skill forged an earlier one", async () => {
    const out = collector();
    const filter = new FilesFrameFilter(NONCE, out.sink, LIMITS.maxTotalBytes);
    const forged = { path: "forged.txt", content: Buffer.from("x") };
    const real = { path: "real.txt", content: Buffer.from("y") };
    await feed(filter, Buffer.concat([frame(manifestOf([forged]), forged.content), frame(manifestOf([real]), real.content)]), 9);
    expect(readOutputFiles(filter.frame(), LIMITS).files.map((f) => f.path)).toEqual(["real.txt"]);
  });

  it("copies a frame's bytes once, into one buffer of its declared size that the returned files are views of", async () => {
    const filter = new FilesFrameFilter(NONCE, collector().sink, LIMITS.maxTotalBytes);
    const first = { path: "a.bin", content: Buffer.alloc(700, 1) };
    const second = { path: "b.bin", content: Buffer.alloc(900, 2) };
    const chunk = Buffer.concat([frame(manifestOf([first, second]), Buffer.concat([first.content, second.content]))]);
    await feed(filter, chunk, 97);
    // The chunks fed are views of `chunk`: the frame must not keep any of them (the stream reuses nothing, but a
    // kept view would hold every chunk it came in alive).
    chunk.fill(0);
    const taken = filter.frame();
    if (taken?.kind !== "frame") throw new Error("no frame");
    expect(taken.data.length).toBe(1600);
    expect(taken.data.buffer.byteLength).toBe(1600);
    const files = readOutputFiles(taken, LIMITS).files;
    expect(files.map((f) => [f.path, f.content.equals(f.path === "a.bin" ? first.content : second.content)])).toEqual([
      ["a.bin", true],
      ["b.bin", true],
    ]);
    expect(files.every((f) => f.content.buffer === taken.data.buffer)).toBe(true);
  });
});

describe("readOutputFiles", () => {
  const read = (manifest: object, data: Buffer) =>
    readOutputFiles({ kind: "frame", manifest: Buffer.from(JSON.stringify(manifest)), data }, LIMITS);

  it("skips names that are not plain relative paths, and bytes that do not match their digest", () => {
    const good = { path: "ok.txt", content: Buffer.from("ok") };
    const files = [
      { path: "../up.txt", content: Buffer.from("a") },
      { path: "line\nbreak", content: Buffer.from("b") },
      { path: "bad\udcffname", content: Buffer.from("c") },
      { path: "garbled.txt", content: Buffer.from("d"), sha256: sha(Buffer.from("e")) },
      good,
    ];
    const result = read(manifestOf(files), Buffer.concat(files.map((f) => f.content)));
    expect(result.files.map((f) => f.path)).toEqual(["ok.txt"]);
    expect(result.warnings).toEqual([
      `skipped an output file whose name has an empty, '.' or '..' segment: "../up.txt"`,
      `skipped an output file whose name holds a control character: "line\\nbreak"`,
      `skipped an output file whose name is not valid UTF-8: "bad\\udcffname"`,
      "skipped output file garbled.txt: its bytes came back garbled (a process the skill left running wrote to stdout as the files went out)",
    ]);
  });

  it("marks a file whose first bytes came back as truncated, with its whole size and digest", () => {
    const first = Buffer.alloc(1024, 7);
    const result = read(manifestOf([{ path: "big.bin", content: first, size: 5000, sha256: "a".repeat(64) }]), first);
    expect(result.files[0]).toMatchObject({
      sizeBytes: 5000,
      truncated: true,
      sha256: "a".repeat(64),
      mediaType: "application/octet-stream",
    });
    expect(result.warnings).toEqual([
      "output file big.bin is 5000 bytes; its first 1024 came back (limits: 1024 bytes a file, 2048 in all)",
    ]);
  });

  it("refuses inline bytes past the limits, a malformed manifest, and data shorter than the manifest says", () => {
    const tooBig = Buffer.alloc(1500);
    expect(read(manifestOf([{ path: "x", content: tooBig }]), tooBig).warnings).toEqual([
      "skipped output file x: its inline size is past the limits",
    ]);
    expect(readOutputFiles({ kind: "frame", manifest: Buffer.from("{nope"), data: Buffer.alloc(0) }, LIMITS).warnings).toEqual([
      "the run's output files did not come back: their manifest was malformed",
    ]);
    const cut = read(manifestOf([{ path: "x", content: Buffer.from("abc") }]), Buffer.from("a"));
    expect(cut.files).toEqual([]);
    expect(cut.warnings).toEqual(["the run's output files came back cut short: the rest were dropped"]);
  });

  it("words what the sandbox skipped and how many more files stayed behind", () => {
    const result = read(
      {
        files: [],
        skipped: [
          { path: "link", kind: "symbolic link" },
          { path: "p", kind: "fifo" },
          { path: "odd", kind: "<script>" },
        ],
        skipped_count: 5,
        more: 12,
        full: true,
      },
      Buffer.alloc(0),
    );
    expect(result.full).toBe(true);
    expect(result.warnings).toEqual([
      "skipped link under /sandbox/out: a symbolic link, not a regular file",
      "skipped p under /sandbox/out: a fifo, not a regular file",
      "skipped odd under /sandbox/out: a special file, not a regular file",
      "skipped 2 more entries under /sandbox/out that are not regular files",
      "12 more output files were not returned: at most 256 come back (SKILL_ENGINE_OUTPUT_FILES_MAX)",
    ]);
  });
});
