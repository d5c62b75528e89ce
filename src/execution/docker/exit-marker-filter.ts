import { Writable } from "node:stream";
import { EXIT_MARKER_END, exitMarkerPrefix } from "./container-entry.js";

/** Longest exit code text plus terminator the filter waits for after a prefix. */
const MAX_MARKER_TAIL = 8;

/**
 * Passes one output stream of a warm run through to `sink`, removing the entry script's exit marker
 * and reporting the exit code it carries. Bytes are held back only while they could be the start
 * of a marker split across chunks, and are released when the stream ends.
 */
export class ExitMarkerFilter extends Writable {
  private readonly prefix: Buffer;
  private carry: Buffer = Buffer.alloc(0);
  private seen = false;

  constructor(
    nonce: string,
    private readonly sink: Writable,
    private readonly onMarker: (exitCode: number) => void,
  ) {
    super();
    this.prefix = exitMarkerPrefix(nonce);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.seen) {
      this.sink.write(chunk);
      callback();
      return;
    }
    const data = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    this.carry = Buffer.alloc(0);
    const at = data.indexOf(this.prefix);
    if (at >= 0) {
      const end = data.indexOf(EXIT_MARKER_END, at + this.prefix.length);
      if (end >= 0 && end - (at + this.prefix.length) <= MAX_MARKER_TAIL) {
        const code = Number(data.subarray(at + this.prefix.length, end).toString("latin1"));
        this.forward(data.subarray(0, at));
        this.forward(data.subarray(end + EXIT_MARKER_END.length));
        this.seen = true;
        this.onMarker(Number.isInteger(code) ? code : 1);
      } else if (end < 0 && data.length - at < this.prefix.length + MAX_MARKER_TAIL + EXIT_MARKER_END.length) {
        this.forward(data.subarray(0, at));
        this.carry = Buffer.from(data.subarray(at));
      } else {
        this.forward(data);
      }
    } else {
      // Keep what could be the beginning of a prefix split across chunks.
      const keep = Math.min(data.length, this.prefix.length - 1);
      this.forward(data.subarray(0, data.length - keep));
      this.carry = Buffer.from(data.subarray(data.length - keep));
    }
    callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.flush();
    callback();
  }

  /**
   * Releases what is held back, at once: the run is over without a marker (killed, timed out)
   * and the stream will bring nothing more, but nobody ends it.
   */
  flush(): void {
    this.forward(this.carry);
    this.carry = Buffer.alloc(0);
  }

  private forward(bytes: Buffer): void {
    if (bytes.length > 0) this.sink.write(bytes);
  }
}
