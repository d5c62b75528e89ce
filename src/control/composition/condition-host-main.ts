/**
 * The condition host's program (docs/composition.md#where-conditions-run), a child process of the
 * service forked by `condition-host.ts` with a capped heap: says `{type: "ready"}`, then answers each
 * `{id, text, scope}` with `{type: "result", id, value}` or `{type: "result", id, error}`, one at a
 * time (the host sends the next request only after the answer). A condition that runs away can only
 * take this process down; the host then kills or replaces it. It exits when its parent's IPC channel
 * closes, so it never outlives the service, however the service ended.
 */
import { evaluateCondition } from "./condition-evaluation.js";

/** A request from the host. */
export interface ConditionRequest {
  readonly id: number;
  readonly text: string;
  readonly scope: unknown;
}

/** What the host hears. */
export type ConditionMessage =
  { readonly type: "ready" } | { readonly type: "result"; readonly id: number; readonly value?: boolean; readonly error?: string };

const send = process.send?.bind(process);
if (send === undefined) throw new Error("condition-host-main runs only as a forked child process");
process.on("disconnect", () => process.exit(0));
// A terminal's Ctrl-C reaches the whole process group: the service drains (and may still evaluate
// conditions) while this host lives on; it ends when the service stops it or goes away.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => undefined);

const post = (message: ConditionMessage): void => {
  // The parent may be gone between the check and the write: then this host ends too.
  if (process.connected) send(message, undefined, {}, (error) => error && process.exit(0));
};

process.on("message", (raw) => {
  const { id, text, scope } = raw as ConditionRequest;
  evaluateCondition(text, scope).then(
    (value) => post({ type: "result", id, value }),
    (error: unknown) => post({ type: "result", id, error: error instanceof Error ? error.message : String(error) }),
  );
});
post({ type: "ready" });
