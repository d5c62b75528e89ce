import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { HostAllowList } from "./allowed-hosts.js";
import type { ServiceMetrics } from "./metrics.js";

/** Another handler sharing the port (the operator console); it says whether a request was its own. */
export interface HttpMount {
  handle(request: IncomingMessage, response: ServerResponse): boolean;
}

export interface MetricsServerOptions {
  /** The interface to bind (SKILL_ENGINE_HOST). */
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** The `Host` names /metrics and the console answer to (docs/security.md#dns-rebinding); anything else gets 421. */
  readonly allowedHosts: HostAllowList;
  /** `detail`, when it says something, follows "ready: " or "not ready: " (the runners' capacity, docs/execution-hosts.md#health). @default always ready */
  readonly probes?: { ready(): boolean; detail?(): string | undefined };
  /** The operator console, when it is on. */
  readonly mount?: HttpMount;
}

/**
 * The Prometheus scrape endpoint, GET /metrics, on its own HTTP port; beside it the probes that
 * container orchestrators speak: GET /healthz (the process answers) and GET /readyz (200 while
 * the sandbox engine is reachable, 503 otherwise: the same judgement as grpc.health.v1). Every
 * other request must name an allowed host, before any handler sees it (421 otherwise).
 */
export async function startMetricsServer(
  metrics: ServiceMetrics,
  options: MetricsServerOptions,
): Promise<{ port: number; close(): Promise<void> }> {
  const { host, port, allowedHosts, probes = { ready: () => true }, mount } = options;
  const server: Server = createServer((request, response) => {
    const route = (request.url ?? "").split("?")[0];
    // The probes answer whatever name they are asked by (orchestrators probe by address, some
    // without a Host header) and tell nothing; the metrics and the console only their own names.
    if (route !== "/healthz" && route !== "/readyz" && !allowedHosts.allowsHost(request.headers.host)) {
      response
        .writeHead(421, { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff", "cache-control": "no-store" })
        .end(`misdirected request: this port answers to ${allowedHosts.describe()}; to reach it by another name, list that name there\n`);
      return;
    }
    if (mount?.handle(request, response)) return;
    if (request.method === "GET" && route === "/healthz") {
      response.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
      return;
    }
    if (request.method === "GET" && route === "/readyz") {
      const ready = probes.ready();
      response.writeHead(ready ? 200 : 503, { "content-type": "text/plain" }).end(readyText(ready, probes.detail?.()));
      return;
    }
    if (request.method !== "GET" || route !== "/metrics") {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found: GET /metrics, /healthz or /readyz\n");
      return;
    }
    metrics.registry.metrics().then(
      (body) => response.writeHead(200, { "content-type": metrics.registry.contentType }).end(body),
      (error: unknown) => response.writeHead(500, { "content-type": "text/plain" }).end(`${String(error)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readyText(ready: boolean, detail: string | undefined): string {
  if (detail) return `${ready ? "ready" : "not ready"}: ${detail}\n`;
  return ready ? "ready\n" : "not ready: the sandbox engine cannot be reached\n";
}
