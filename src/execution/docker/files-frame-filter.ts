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
 * A frame within the limits is copied once, into buffers of its declared sizes allocated when its
 * header has been read (docs/performance.md#files-in-and-out): no list of chunks joined at the end.
 */
export class FilesFrameFilter extends Writable {
  private readonly prefix: Buffer;
  private carry: Buffer = Buffer.alloc(0);
  /**
   * The frame being read: how much of its manifest and data has come, and the buffers of their
   * declared sizes that keep them (none for a frame past the limits, which is only counted through).
   */
  private reading:
    { manifestAt: number; dataAt: number; kept: { manifest: Buffer; data: Buffer } | undefined; sizes: [number, number] } | undefined;
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
        // Within the limits, so allocating the declared sizes is bounded; every byte of them is
        // written before the frame counts as complete, so unzeroed memory is never exposed.
        const kept = keep ? { manifest: Buffer.allocUnsafeSlow(manifestBytes), data: Buffer.allocUnsafeSlow(dataBytes) } : undefined;
        this.reading = { manifestAt: 0, dataAt: 0, kept, sizes };
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
    const [manifestBytes, dataBytes] = reading.sizes;
    const fromManifest = Math.min(manifestBytes - reading.manifestAt, data.length);
    if (fromManifest > 0) {
      if (reading.kept) data.copy(reading.kept.manifest, reading.manifestAt, 0, fromManifest);
      reading.manifestAt += fromManifest;
      data = data.subarray(fromManifest);
    }
    const fromData = Math.min(dataBytes - reading.dataAt, data.length);
    if (fromData > 0) {
      if (reading.kept) data.copy(reading.kept.data, reading.dataAt, 0, fromData);
      reading.dataAt += fromData;
      data = data.subarray(fromData);
    }
    if (reading.manifestAt === manifestBytes && reading.dataAt === dataBytes) this.finishFrame();
    return data;
  }

  private finishFrame(): void {
    const reading = this.reading;
    if (!reading) return;
    this.reading = undefined;
    this.taken = reading.kept
      ? { kind: "frame", manifest: reading.kept.manifest, data: reading.kept.data }
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
