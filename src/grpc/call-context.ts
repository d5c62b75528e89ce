import type { ServerUnaryCall } from "@grpc/grpc-js";
import { RunCancelledError } from "../errors/index.js";

/**
 * An AbortSignal that fires when the client cancels or its deadline passes, so the run (and its
 * container) stops as soon as nobody is waiting for it.
 */
export function signalOf(call: ServerUnaryCall<unknown, unknown>): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const deadline = call.getDeadline();
  const deadlineMs = deadline instanceof Date ? deadline.getTime() : Number(deadline);
  const onCancelled = (): void => {
    const expired = Number.isFinite(deadlineMs) && Date.now() >= deadlineMs - 5;
    controller.abort(new RunCancelledError(expired ? "deadline" : "cancelled"));
  };
  call.on("cancelled", onCancelled);
  let timer: NodeJS.Timeout | undefined;
  if (Number.isFinite(deadlineMs) && deadlineMs > 0) {
    // grpc-js also cancels the call on expiry; the timer makes sure the work stops even if the
    // transport is slow to notice.
    timer = setTimeout(() => controller.abort(new RunCancelledError("deadline")), Math.max(0, deadlineMs - Date.now()));
    timer.unref();
  }
  if (call.cancelled) onCancelled();
  return {
    signal: controller.signal,
    dispose: () => {
      if (timer) clearTimeout(timer);
      call.removeListener("cancelled", onCancelled);
    },
  };
}
