import { Writable } from "node:stream";
import { EXIT_MARKER_END, exitMarkerPrefix, filesFramePrefix } from "./container-entry.js";

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
  private readonly exitPrefix: Buffer;
  /** The exit marker came through: everything after it passes as it is. */
  private ended = false;

  constructor(
    nonce: string,
    private readonly sink: Writable,
    private readonly maxDataBytes: number,
  ) {
    super();
    this.prefix = filesFramePrefix(nonce);
    this.exitPrefix = exitMarkerPrefix(nonce);
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
      if (this.ended) {
        this.forward(data);
        break;
      }
      const at = data.indexOf(this.prefix);
      const exitAt = data.indexOf(this.exitPrefix);
      if (exitAt >= 0 && (at < 0 || exitAt < at)) {
        // The exit marker: the entry script writes no frame after it, and the marker's filter must
        // see it at once (holding its last bytes back would make the run wait for the container's exit).
        this.ended = true;
        this.forward(data);
        break;
      }
      if (at < 0) {
        // Keep only what could be the beginning of a prefix split across chunks.
        const keep = partialPrefixAtEnd(data, this.prefix);
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

/** The length of the longest end of `data` that is a beginning of `prefix` (shorter than all of it). */
function partialPrefixAtEnd(data: Buffer, prefix: Buffer): number {
  for (let keep = Math.min(data.length, prefix.length - 1); keep > 0; keep--) {
    if (data.subarray(data.length - keep).equals(prefix.subarray(0, keep))) return keep;
  }
  return 0;
}
