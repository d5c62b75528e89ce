import { PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { demultiplexAttachStream } from "./attach-demux.js";

/** One frame of the engine's multiplexed attach stream. */
function frame(type: number, payload: string | Buffer): Buffer {
  const body = typeof payload === "string" ? Buffer.from(payload) : payload;
  const header = Buffer.alloc(8);
  header.writeUInt8(type, 0);
  header.writeUInt32BE(body.length, 4);
  return Buffer.concat([header, body]);
}

/** A sink that keeps every piece it is given, as given. */
function sink(): { writable: Writable; pieces: Buffer[]; text: () => string } {
  const pieces: Buffer[] = [];
  const writable = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      pieces.push(chunk);
      callback();
    },
  });
  return { writable, pieces, text: () => Buffer.concat(pieces).toString("latin1") };
}

function attach(): { stream: PassThrough; out: ReturnType<typeof sink>; err: ReturnType<typeof sink> } {
  const stream = new PassThrough();
  const out = sink();
  const err = sink();
  demultiplexAttachStream(stream, out.writable, err.writable);
  return { stream, out, err };
}

describe("demultiplexAttachStream", () => {
  const bytes = Buffer.concat([
    frame(1, "hello "),
    frame(2, "warning\n"),
    frame(1, ""),
    frame(0, "stdin echo"),
    frame(1, "world"),
    frame(2, "done\n"),
  ]);

  for (const size of [1, 3, 7, 8, 9, 64, bytes.length]) {
    it(`splits frames fed in chunks of ${size} bytes into stdout and stderr, dropping stdin's`, () => {
      const { stream, out, err } = attach();
      for (let at = 0; at < bytes.length; at += size) stream.write(bytes.subarray(at, at + size));
      expect(out.text()).toBe("hello world");
      expect(err.text()).toBe("warning\ndone\n");
    });
  }

  it("forwards a frame's bytes as they come, as views of the chunk they came in, never joined copies", () => {
    const { stream, out } = attach();
    const payload = Buffer.alloc(256 * 1024, 7);
    const whole = frame(1, payload);
    const first = Buffer.from(whole.subarray(0, 100_000));
    stream.write(first);
    // Before its frame is complete: a MiB of files need not wait in a buffer here.
    expect(out.pieces).toHaveLength(1);
    expect(out.pieces[0]?.buffer).toBe(first.buffer);
    expect(out.pieces[0]?.length).toBe(100_000 - 8);
    const rest = Buffer.from(whole.subarray(100_000));
    stream.write(rest);
    expect(out.pieces[1]?.buffer).toBe(rest.buffer);
    expect(Buffer.concat(out.pieces).equals(payload)).toBe(true);
  });

  it("passes the rest through to stdout as it is when the stream turns out not to be multiplexed", () => {
    const { stream, out, err } = attach();
    stream.write(Buffer.concat([frame(1, "framed "), Buffer.from("plain text, no header"), Buffer.from(" and more")]));
    stream.write(Buffer.from(" later"));
    expect(out.text()).toBe("framed plain text, no header and more later");
    expect(err.text()).toBe("");
  });
});
