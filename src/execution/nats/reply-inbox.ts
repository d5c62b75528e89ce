import { createInbox, type Msg, type NatsConnection, type Subscription } from "@nats-io/transport-node";

/** What waiting for the next message can end with. */
export type NextReply = { readonly msg: Msg } | { readonly timeout: true } | { readonly aborted: true };

/**
 * A private subject the runner's replies come to, read one message at a time with a time limit:
 * the control plane hears "accepted", then "alive" beats, then the answer (docs/execution-hosts.md#messages),
 * and a gap longer than the limit means the runner is gone.
 */
export class ReplyInbox {
  readonly subject: string;
  private readonly subscription: Subscription;
  private readonly queued: Msg[] = [];
  private waiter: ((msg: Msg) => void) | undefined;

  constructor(connection: NatsConnection, prefix: string) {
    this.subject = createInbox(`${prefix}._INBOX`);
    this.subscription = connection.subscribe(this.subject, {
      callback: (error, msg) => {
        if (error) return;
        if (this.waiter) {
          const deliver = this.waiter;
          this.waiter = undefined;
          deliver(msg);
        } else this.queued.push(msg);
      },
    });
  }

  /** The next message, or why there is none within `timeoutMs`. */
  next(timeoutMs: number, signal: AbortSignal): Promise<NextReply> {
    const queued = this.queued.shift();
    if (queued) return Promise.resolve({ msg: queued });
    if (signal.aborted) return Promise.resolve({ aborted: true });
    return new Promise<NextReply>((resolve) => {
      const finish = (reply: NextReply): void => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.waiter = undefined;
        resolve(reply);
      };
      const onAbort = (): void => finish({ aborted: true });
      const timer = setTimeout(() => finish({ timeout: true }), timeoutMs);
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiter = (msg) => finish({ msg });
    });
  }

  close(): void {
    this.subscription.unsubscribe();
  }
}

/** The bus's own answer when nobody subscribes to the subject: status 503, no data. */
export function isNoResponders(msg: Msg): boolean {
  return msg.headers?.code === 503;
}
