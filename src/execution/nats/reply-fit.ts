import type { ExecutionResult, RunOutputFile } from "../sandbox-runner.js";
import { encodeReply } from "./wire.js";

/**
 * Room kept in a cut reply for what the estimate below does not count exactly (the warning's own
 * digits, JSON separators): the reply is encoded and measured again at the end in any case.
 */
const SLACK_BYTES = 256;

/**
 * A run's result reply that fits in `maxPayload` bytes (nats-server's max_payload), for a runner
 * (docs/execution-hosts.md#files). A reply that fits is sent whole. Otherwise its output files are
 * cut rather than the run failed: files keep their content in order while it fits, the file where
 * room runs out keeps its first bytes and is flagged `truncated`, later files keep their entry
 * (path, size, digest) with no content, and files whose entries do not fit either are dropped;
 * a warning says the bus's max_payload limited them. Only the files are cut: stdout and stderr are
 * bounded by the sandbox's own output limit.
 */
export function encodeResultReply(result: ExecutionResult, maxPayload: number): { bytes: Uint8Array; cut?: string } {
  const whole = encodeReply({ type: "result", result });
  const files = result.outputFiles ?? [];
  if (whole.byteLength <= maxPayload || files.length === 0) return { bytes: whole };

  const warning = (truncated: number, dropped: number): string =>
    `output files cut to fit the message bus (${truncated} truncated, ${dropped} left out): ` +
    `a runner's reply may be at most ${maxPayload} bytes (nats-server's max_payload); ` +
    "raise max_payload for larger files (docs/execution-hosts.md#files)";
  const withFiles = (kept: readonly RunOutputFile[], note: string): Uint8Array =>
    encodeReply({
      type: "result",
      result: { ...result, outputFiles: kept, fileWarnings: [...(result.fileWarnings ?? []), note] },
    });

  // Everything but the files, with the longest the warning can be.
  const base = withFiles([], warning(files.length, files.length)).byteLength;
  let room = maxPayload - base - SLACK_BYTES;
  // First every entry that fits without its content, in order; the rest are dropped.
  const entries: RunOutputFile[] = [];
  for (const file of files) {
    const entry = { ...file, content: Buffer.alloc(0) };
    const size = Buffer.byteLength(JSON.stringify({ ...entry, content: "" })) + 1;
    if (size > room) break;
    room -= size;
    entries.push(entry);
  }
  // Then content, in order, while there is room: base64 takes 4 characters for every 3 bytes.
  let truncated = 0;
  const kept = entries.map((entry, index) => {
    const content = (files[index] as RunOutputFile).content;
    const fits = Math.min(content.byteLength, Math.max(0, Math.floor(room / 4)) * 3);
    room -= 4 * Math.ceil(fits / 3);
    if (fits === content.byteLength) return { ...entry, content };
    truncated++;
    return { ...entry, content: content.subarray(0, fits), truncated: true };
  });
  const note = warning(truncated, files.length - kept.length);
  const bytes = withFiles(kept, note);
  if (bytes.byteLength <= maxPayload) return { bytes, cut: note };
  // The estimate was wrong (it should not be): no file rather than no answer.
  const none = warning(0, files.length);
  return { bytes: withFiles([], none), cut: none };
}
