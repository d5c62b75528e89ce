import { Writable } from "node:stream";
import { EXIT_MARKER_END, filesFramePrefix } from "./container-entry.js";

/** Longest `<manifest bytes>:<data bytes>` header plus terminator the filter waits for after a prefix. */
const MAX_HEADER_TAIL = 40;
/** A manifest larger than this is not the entry script's (256 files and 100 skipped entries fit many times over). */
export const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;

/** The output files frame as it came through, or why it could not be taken. */
export type FilesFrame =
  | { readonly kind: "frame"; readonly manifest: Buffer; readonly data: Buffer }
  | { readonly kind: "oversized"; readonly manifestBytes: number; readonly dataBytes: number };

/**
 * Takes the entry script's output files frame (container-entry.ts) out of a run's stdout and passes
 * every other byte through to `sink` (the exit marker's filter). The frame's sizes are bounded
 * before anything is kept: a frame that claims more than `maxDataBytes` of file data or
 * {@link MAX_MANIFEST_BYTES} of manifest is consumed and dropped (the run's files then come back
 * with a warning), so a skill that forges one costs the host no memory. When several frames come
 * through (a skill that forged one), the last wins: the entry script's own comes right before its
 * exit marker. Bytes are held back only while they could be the start of a prefix split across chunks.
 */
export class FilesFrameFilter extends Writable {
  private readonly prefix: Buffer;
  private carry: Buffer = Buffer.alloc(0);
  /** The frame being read: what is left of its manifest and data, and what is kept of them. */
  private reading:
    { manifestLeft: number; dataLeft: number; manifest: Buffer[]; data: Buffer[]; keep: boolean; sizes: [number, number] } | undefined;
  private taken: FilesFrame | undefined;

  constructor(
    nonce: string,
    private readonly sink: Writable,
    private readonly maxDataBytes: number,
  ) {
    super();
    this.prefix = filesFramePrefix(nonce);
  }

  /** The last complete frame, if any came through. */
  frame(): FilesFrame | undefined {
    return this.taken;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    let data = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    this.carry = Buffer.alloc(0);
    while (data.length > 0) {
      if (this.reading) {
        data = this.consumeFrame(data);
        continue;
      }
      const at = data.indexOf(this.prefix);
      if (at < 0) {
        // Keep what could be the beginning of a prefix split across chunks.
        const keep = Math.min(data.length, this.prefix.length - 1);
        this.forward(data.subarray(0, data.length - keep));
        this.carry = Buffer.from(data.subarray(data.length - keep));
        break;
      }
      this.forward(data.subarray(0, at));
      const headerStart = at + this.prefix.length;
      const end = data.indexOf(EXIT_MARKER_END, headerStart);
      const sizes = end >= 0 && end - headerStart <= MAX_HEADER_TAIL ? parseSizes(data.subarray(headerStart, end)) : undefined;
      if (sizes) {
        const [manifestBytes, dataBytes] = sizes;
        const keep = manifestBytes <= MAX_MANIFEST_BYTES && dataBytes <= this.maxDataBytes;
        this.reading = { manifestLeft: manifestBytes, dataLeft: dataBytes, manifest: [], data: [], keep, sizes };
        data = data.subarray(end + EXIT_MARKER_END.length);
        if (manifestBytes + dataBytes === 0) this.finishFrame();
      } else if (end < 0 && data.length - headerStart < MAX_HEADER_TAIL + EXIT_MARKER_END.length) {
        this.carry = Buffer.from(data.subarray(at));
        break;
      } else {
        // Not a frame after all: ordinary output that happens to contain the prefix.
        this.forward(data.subarray(at, headerStart));
        data = data.subarray(headerStart);
      }
    }
    callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.flush();
    callback();
  }

  /** Releases what is held back (the run is over; nothing more will come). */
  flush(): void {
    this.forward(this.carry);
    this.carry = Buffer.alloc(0);
  }

  /** Takes the frame's bytes from the front of `data`; returns what follows them. */
  private consumeFrame(data: Buffer): Buffer {
    const reading = this.reading;
    if (!reading) return data;
    const fromManifest = Math.min(reading.manifestLeft, data.length);
    if (fromManifest > 0) {
      if (reading.keep) reading.manifest.push(Buffer.from(data.subarray(0, fromManifest)));
      reading.manifestLeft -= fromManifest;
      data = data.subarray(fromManifest);
    }
    const fromData = Math.min(reading.dataLeft, data.length);
    if (fromData > 0) {
      if (reading.keep) reading.data.push(Buffer.from(data.subarray(0, fromData)));
      reading.dataLeft -= fromData;
      data = data.subarray(fromData);
    }
    if (reading.manifestLeft === 0 && reading.dataLeft === 0) this.finishFrame();
    return data;
  }

  private finishFrame(): void {
    const reading = this.reading;
    if (!reading) return;
    this.reading = undefined;
    this.taken = reading.keep
      ? { kind: "frame", manifest: Buffer.concat(reading.manifest), data: Buffer.concat(reading.data) }
      : { kind: "oversized", manifestBytes: reading.sizes[0], dataBytes: reading.sizes[1] };
  }

  private forward(bytes: Buffer): void {
    if (bytes.length > 0) this.sink.write(bytes);
  }
}

/** `<manifest bytes>:<data bytes>` as two safe integers, or undefined when it is not that. */
function parseSizes(header: Buffer): [number, number] | undefined {
  const match = /^(\d{1,15}):(\d{1,15})$/.exec(header.toString("latin1"));
  if (!match) return undefined;
  return [Number(match[1]), Number(match[2])];
}
