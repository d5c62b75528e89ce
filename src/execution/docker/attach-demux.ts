import type { Readable, Writable } from "node:stream";

/** The engine's frame header on a multiplexed attach stream: stream type, three zero bytes, payload size (big-endian). */
const HEADER_BYTES = 8;
const STDOUT = 1;
const STDERR = 2;

/**
 * Splits a container's multiplexed attach stream (no TTY: each piece of output comes as an 8-byte
 * header, `[type, 0, 0, 0, size as uint32 BE]`, then `size` bytes) into `stdout` and `stderr`.
 *
 * Every piece is forwarded as a view of the chunk it came in, as soon as it comes, even when its
 * frame continues in the next chunk: nothing is joined or copied here. Only a header split across
 * chunks is held (at most 7 bytes). A run that returns a MiB of files sends it through this stream,
 * and the engine library's demultiplexer copied each chunk three or four times on the way
 * (docs/performance.md#files-in-and-out). Type 0 (stdin) is dropped; a type the engine never sends
 * means the stream is not multiplexed after all, and the rest of it passes to `stdout` as it is
 * (as dockerode's demultiplexer does).
 */
export function demultiplexAttachStream(attached: Readable, stdout: Writable, stderr: Writable): void {
  let header = Buffer.alloc(0);
  /** The current frame's stream (null: stdin's, dropped) and how many of its bytes are still to come. */
  let target: Writable | null = null;
  let left = 0;
  let raw = false;
  attached.on("data", (chunk: Buffer) => {
    if (raw) {
      stdout.write(chunk);
      return;
    }
    let at = 0;
    while (at < chunk.length) {
      if (left === 0) {
        const need = HEADER_BYTES - header.length;
        if (chunk.length - at < need) {
          header = Buffer.concat([header, chunk.subarray(at)]);
          return;
        }
        const full = header.length > 0 ? Buffer.concat([header, chunk.subarray(at, at + need)]) : chunk.subarray(at, at + need);
        header = Buffer.alloc(0);
        at += need;
        const type = full.readUInt8(0);
        if (type > STDERR) {
          raw = true;
          stdout.write(Buffer.concat([full, chunk.subarray(at)]));
          return;
        }
        target = type === STDOUT ? stdout : type === STDERR ? stderr : null;
        left = full.readUInt32BE(4);
        continue;
      }
      const take = Math.min(left, chunk.length - at);
      if (target) target.write(chunk.subarray(at, at + take));
      at += take;
      left -= take;
    }
  });
}
