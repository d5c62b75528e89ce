import { ServerInterceptingCall, type ServerInterceptor, status } from "@grpc/grpc-js";
import { ReplyScope } from "../reply-scope/index.js";

/**
 * A server interceptor that knows which calls are being served, for shutdown: it counts calls
 * in flight (to report how many were let finish and how many were cut off), and it can end the
 * long-lived streams that would otherwise hold a graceful shutdown until its deadline (a health
 * Watch never ends by itself). A counted call runs from its arrival until it sends its status or
 * its stream closes (client cancel, deadline, forced shutdown), whichever comes first. It also
 * gives each counted call its {@link ReplyScope}, settled at that same end.
 */
export class CallTracker {
  private active = 0;
  private ended = 0;
  private readonly streams = new Set<ServerInterceptingCall>();

  /** `endedOnDrain`: full method paths ("/pkg.Service/Method") of streams that `endStreams` ends; they are not counted. */
  constructor(private readonly endedOnDrain: ReadonlySet<string>) {}

  /** Counted calls being served now. */
  get inFlight(): number {
    return this.active;
  }

  /** Counted calls that have ended since the server started. */
  get finished(): number {
    return this.ended;
  }

  readonly interceptor: ServerInterceptor = (method, call) => {
    if (this.endedOnDrain.has(method.path)) {
      const stream: ServerInterceptingCall = new ServerInterceptingCall(call, {
        start: (next) => next({ onCancel: () => this.streams.delete(stream) }),
        sendStatus: (status, next) => {
          this.streams.delete(stream);
          next(status);
        },
      });
      this.streams.add(stream);
      return stream;
    }
    this.active++;
    let done = false;
    // Work the handler defers until its reply is out (src/reply-scope) runs once the status is sent.
    const scope = new ReplyScope();
    const end = (): void => {
      if (done) return;
      done = true;
      this.active--;
      this.ended++;
      scope.settle();
    };
    return new ServerInterceptingCall(call, {
      // grpc-js calls a unary handler from the half-close: everything it starts runs in the scope.
      start: (next) => next({ onReceiveHalfClose: (nextHalfClose) => scope.run(nextHalfClose), onCancel: end }),
      sendStatus: (status, next) => {
        next(status);
        end();
      },
    });
  };

  /** Ends every open stream of the `endedOnDrain` methods with UNAVAILABLE. */
  endStreams(details: string): number {
    const open = [...this.streams];
    for (const stream of open) stream.sendStatus({ code: status.UNAVAILABLE, details });
    return open.length;
  }
}
