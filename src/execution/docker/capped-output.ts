import { Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";

const TAIL_BYTES = 8 * 1024;

/**
 * Collects one output stream of a run, keeping at most `limitBytes` from the start (what the
 * caller sees) and the last few KiB (where Python puts the traceback's cause). Everything past
 * the limit is drained and dropped, so a skill that prints gigabytes costs no memory.
 */
export class CappedOutput {
  readonly writable: Writable;
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail = Buffer.alloc(0);
  private totalBytes = 0;

  constructor(private readonly limitBytes: number) {
    this.writable = new Writable({
      write: (chunk: Buffer, _encoding, callback) => {
        this.append(chunk);
        callback();
      },
    });
  }

  get truncated(): boolean {
    return this.totalBytes > this.limitBytes;
  }

  /** The kept head, decoded as UTF-8 without a broken character at the cut. */
  text(): string {
    const decoder = new StringDecoder("utf8");
    const body = decoder.write(Buffer.concat(this.head));
    // A multi-byte character split by the cap is dropped rather than shown as U+FFFD.
    return this.truncated ? body : body + decoder.end();
  }

  /** The last bytes seen, decoded leniently; for error summaries. */
  tailText(): string {
    return this.tail.toString("utf8");
  }

  private append(chunk: Buffer): void {
    this.totalBytes += chunk.length;
    const room = this.limitBytes - this.headBytes;
    if (room > 0) {
      const kept = chunk.length <= room ? chunk : chunk.subarray(0, room);
      this.head.push(Buffer.from(kept));
      this.headBytes += kept.length;
    }
    this.tail =
      chunk.length >= TAIL_BYTES
        ? Buffer.from(chunk.subarray(chunk.length - TAIL_BYTES))
        : Buffer.concat([this.tail, chunk]).subarray(-TAIL_BYTES);
  }
}
