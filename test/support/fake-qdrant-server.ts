import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * TEST SUPPORT ONLY. A real HTTP server on 127.0.0.1 that speaks the slice of Qdrant's REST API
 * the adapter uses (collections, payload indexes, upsert, delete, query, count), with Qdrant's
 * response envelopes and error shapes, so the adapter's requests and error translation are tested
 * through the real client and real sockets when no Qdrant can be run.
 *
 * It behaves like the version docker-compose.yml pins (1.12.4) where the adapter's paths depend on
 * it: strict point ids (UUIDs or unsigned integers) and vector sizes, a 400 for filters it does not
 * understand, the API key checked like Qdrant's (401 with a plain-text body when it is missing or
 * wrong, 403 when a read-only key writes), a 422 for collection parameters out of range, a 413 for
 * a body over the request limit (32 MiB by default), an empty-body 404 for paths it does not serve
 * (and everything outside its path prefix, when it sits behind one), and the version it reports.
 * It records every request for assertions and can inject failures and delays.
 */
export class FakeQdrantServer {
  /** Every request received, in order; `body` is the parsed JSON (undefined when none). */
  readonly requests: RecordedRequest[] = [];
  readonly collections = new Map<string, FakeCollection>();
  private readonly faults: Fault[] = [];
  private server: Server | undefined;

  constructor(private readonly options: FakeQdrantOptions = {}) {}

  /** Starts listening on 127.0.0.1 with a port chosen by the OS; resolves to the base URL. */
  async start(): Promise<string> {
    const server = createServer((request, response) => {
      void this.handle(request, response);
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return this.url;
  }

  get url(): string {
    const address = this.server?.address() as AddressInfo | null | undefined;
    if (!address) throw new Error("fake Qdrant server is not listening");
    return `http://127.0.0.1:${address.port}${this.options.prefix ?? ""}`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    // The client keeps sockets alive; without this, close() waits for them to time out.
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /**
   * Makes the next matching request fail: answer with `status` and `body`, answer late
   * (`delayMs`, then handle normally), or drop the connection without answering (`destroy`).
   */
  injectFault(fault: Fault): void {
    this.faults.push(fault);
  }

  /** Drops every fault not yet used: Qdrant is back. */
  clearFaults(): void {
    this.faults.splice(0);
  }

  /** The recorded requests with this method whose path matches. */
  requestsTo(method: string, pathPattern: RegExp): RecordedRequest[] {
    return this.requests.filter((request) => request.method === method && pathPattern.test(request.path));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const started = process.hrtime.bigint();
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const text = await readBody(request);
    const prefix = this.options.prefix ?? "";
    if (!url.pathname.startsWith(`${prefix}/`) && url.pathname !== prefix) return sendEmpty(response, 404);
    const path = url.pathname.slice(prefix.length) || "/";
    if (Buffer.byteLength(text) > (this.options.maxBodyBytes ?? 32 * 1024 * 1024)) {
      return sendText(response, 413, "Payload Too Large");
    }
    const key = request.headers["api-key"];
    if (this.options.apiKey !== undefined && path !== "/") {
      if (key === undefined) return sendText(response, 401, "Must provide an API key or an Authorization bearer token");
      if (key !== this.options.apiKey && key !== this.options.readOnlyApiKey) return sendText(response, 401, "Invalid API key or JWT");
      if (key === this.options.readOnlyApiKey && isWrite(request.method ?? "GET", path)) {
        return send(response, 403, { status: { error: "Forbidden: Write access is required for this operation" }, time: 0 });
      }
    }
    let body: unknown;
    try {
      body = text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      return send(response, 400, { status: { error: "Format error in JSON body" }, time: 0 });
    }
    const recorded: RecordedRequest = {
      method: request.method ?? "GET",
      path,
      query: Object.fromEntries(url.searchParams),
      headers: request.headers,
      body,
    };
    this.requests.push(recorded);

    const faultIndex = this.faults.findIndex((fault) => !fault.path || fault.path.test(recorded.path));
    const fault = faultIndex >= 0 ? this.faults.splice(faultIndex, 1)[0] : undefined;
    if (fault?.destroy) {
      request.socket.destroy();
      return;
    }
    if (fault?.delayMs) await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
    if (fault?.status) return send(response, fault.status, fault.body ?? { status: { error: "injected fault" }, time: 0 });

    try {
      const result = this.route(recorded);
      const time = Number(process.hrtime.bigint() - started) / 1e9;
      send(response, 200, { result, status: "ok", time });
    } catch (error) {
      if (error instanceof QdrantHttpError) {
        if (error.status === 404 && error.message === "") sendEmpty(response, 404);
        else send(response, error.status, { status: { error: error.message }, time: 0 });
      } else {
        send(response, 500, { status: { error: `fake server bug: ${String(error)}` }, time: 0 });
      }
    }
  }

  private route(request: RecordedRequest): unknown {
    const { method, path } = request;
    if (method === "GET" && path === "/") return { title: "qdrant - vector search engine", version: "1.12.4" };
    const match = /^\/collections\/([^/]+)(\/.*)?$/.exec(path);
    // Qdrant's router answers a path it does not serve with an empty 404.
    if (!match?.[1]) throw new QdrantHttpError(404, "");
    const name = decodeURIComponent(match[1]);
    const rest = match[2] ?? "";
    const body = (request.body ?? {}) as Record<string, unknown>;

    if (rest === "") {
      if (method === "GET") return this.describe(name);
      if (method === "PUT") return this.create(name, body);
      if (method === "DELETE") return this.collections.delete(name);
    }
    const collection = this.collections.get(name);
    if (!collection) throw new QdrantHttpError(404, `Not found: Collection \`${name}\` doesn't exist!`);
    if (method === "PUT" && rest === "/index") {
      if (typeof body["field_name"] !== "string") throw new QdrantHttpError(400, "field_name is required");
      collection.payloadIndexes.set(body["field_name"], body["field_schema"]);
      return updateResult(collection);
    }
    if (method === "PUT" && rest === "/points") return this.upsert(collection, body);
    if (method === "POST" && rest === "/points/delete") return this.remove(collection, body);
    if (method === "POST" && rest === "/points/query") return this.query(collection, body);
    if (method === "POST" && rest === "/points/count") {
      return { count: [...collection.points.values()].filter((point) => matches(point.payload, body["filter"])).length };
    }
    if (method === "POST" && rest === "/points/scroll") return this.scroll(collection, body);
    throw new QdrantHttpError(404, "");
  }

  private describe(name: string): unknown {
    const collection = this.collections.get(name);
    if (!collection) throw new QdrantHttpError(404, `Not found: Collection \`${name}\` doesn't exist!`);
    return {
      status: "green",
      optimizer_status: "ok",
      indexed_vectors_count: 0,
      points_count: collection.points.size,
      segments_count: 1,
      config: {
        params: { vectors: collection.named ?? { size: collection.size, distance: collection.distance }, shard_number: 1 },
        hnsw_config: { m: 16, ef_construct: 100, full_scan_threshold: 10000 },
        optimizer_config: {},
      },
      payload_schema: Object.fromEntries(
        [...collection.payloadIndexes].map(([field, schema]) => [field, { data_type: schema, points: 0 }]),
      ),
    };
  }

  private create(name: string, body: Record<string, unknown>): boolean {
    if (this.collections.has(name)) throw new QdrantHttpError(409, `Wrong input: Collection \`${name}\` already exists!`);
    type Params = { size?: unknown; distance?: unknown };
    const vectors = body["vectors"] as Params | Record<string, Params> | undefined;
    // Named vectors: a map of name → params (someone else's collection, in the tests).
    const single = vectors !== undefined && "size" in vectors;
    const params: Params[] = single ? [vectors as Params] : Object.values((vectors ?? {}) as Record<string, Params>);
    for (const { size, distance } of params) {
      if (typeof size !== "number" || !["Cosine", "Dot", "Euclid", "Manhattan"].includes(String(distance))) {
        throw new QdrantHttpError(400, "Format error in JSON body: vectors must be {size, distance}");
      }
      if (size < 1 || size > 65536) {
        throw new QdrantHttpError(422, `Validation error in JSON body: [vectors.size: value ${size} invalid, must be from 1 to 65536]`);
      }
    }
    const first = params[0] as { size: number; distance: string } | undefined;
    this.collections.set(name, {
      size: single ? (first?.size ?? 0) : 0,
      distance: single ? String(first?.distance) : "",
      ...(single ? {} : { named: vectors as Record<string, unknown> }),
      points: new Map(),
      payloadIndexes: new Map(),
      operations: 0,
    });
    return true;
  }

  private scroll(collection: FakeCollection, body: Record<string, unknown>): unknown {
    const limit = typeof body["limit"] === "number" ? body["limit"] : 10;
    const sorted = [...collection.points.values()]
      .filter((point) => matches(point.payload, body["filter"]))
      .sort((a, b) => String(a.id).localeCompare(String(b.id)));
    const offset = body["offset"];
    const start = offset === undefined || offset === null ? 0 : sorted.findIndex((point) => point.id === offset);
    const page = sorted.slice(Math.max(0, start), Math.max(0, start) + limit);
    const next = sorted[Math.max(0, start) + limit];
    return {
      points: page.map((point) => ({
        id: point.id,
        payload: body["with_payload"] ? selectPayload(point.payload, body["with_payload"]) : undefined,
        ...(body["with_vector"] ? { vector: point.vector } : {}),
      })),
      next_page_offset: next?.id ?? null,
    };
  }

  private upsert(collection: FakeCollection, body: Record<string, unknown>): unknown {
    const points = body["points"];
    if (!Array.isArray(points)) throw new QdrantHttpError(400, "Format error in JSON body: points must be a list");
    for (const point of points as Array<{ id?: unknown; vector?: unknown; payload?: unknown }>) {
      const id = pointId(point.id);
      const vector = point.vector;
      if (!Array.isArray(vector) || !vector.every((value) => typeof value === "number")) {
        throw new QdrantHttpError(400, "Format error in JSON body: vector must be a list of numbers");
      }
      if (vector.length !== collection.size) {
        throw new QdrantHttpError(400, `Wrong input: Vector dimension error: expected dim: ${collection.size}, got ${vector.length}`);
      }
      // Qdrant normalizes on insert for Cosine, so a query is a dot product.
      const stored = collection.distance === "Cosine" ? normalize(vector as number[]) : (vector as number[]);
      collection.points.set(id, { id, vector: stored, payload: (point.payload ?? {}) as Record<string, unknown> });
    }
    return updateResult(collection);
  }

  private remove(collection: FakeCollection, body: Record<string, unknown>): unknown {
    const points = body["points"];
    if (!Array.isArray(points)) throw new QdrantHttpError(400, "fake Qdrant only deletes by a list of point ids");
    for (const id of points) collection.points.delete(pointId(id));
    return updateResult(collection);
  }

  private query(collection: FakeCollection, body: Record<string, unknown>): unknown {
    const query = body["query"];
    if (!Array.isArray(query) || !query.every((value) => typeof value === "number")) {
      throw new QdrantHttpError(400, "fake Qdrant only supports a nearest query given as a plain vector");
    }
    if (query.length !== collection.size) {
      throw new QdrantHttpError(400, `Wrong input: Vector dimension error: expected dim: ${collection.size}, got ${query.length}`);
    }
    const limit = typeof body["limit"] === "number" ? body["limit"] : 10;
    const probe = collection.distance === "Cosine" ? normalize(query as number[]) : (query as number[]);
    const withPayload = body["with_payload"];
    const scored = [...collection.points.values()]
      .filter((point) => matches(point.payload, body["filter"]))
      .map((point) => ({ point, score: point.vector.reduce((sum, value, i) => sum + value * (probe[i] ?? 0), 0) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, limit);
    return {
      points: scored.map(({ point, score }) => ({
        id: point.id,
        version: collection.operations,
        score,
        ...(withPayload ? { payload: selectPayload(point.payload, withPayload) } : {}),
      })),
    };
  }
}

/** One request as the fake server saw it. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Record<string, string>;
  readonly headers: IncomingMessage["headers"];
  readonly body: unknown;
}

/** A failure to inject into the next request whose path matches (any path when omitted). */
export interface Fault {
  readonly path?: RegExp;
  readonly status?: number;
  readonly body?: unknown;
  readonly delayMs?: number;
  readonly destroy?: boolean;
}

/** How the stand-in is set up: an API key like Qdrant's `service.api_key` (and `read_only_api_key`), a path prefix, the request limit. */
export interface FakeQdrantOptions {
  readonly apiKey?: string;
  readonly readOnlyApiKey?: string;
  /** Serve under this path (`/qdrant`), as behind a reverse proxy; anything else is an empty 404. */
  readonly prefix?: string;
  /** @default 32 MiB, Qdrant's `service.max_request_size_mb` */
  readonly maxBodyBytes?: number;
}

export interface FakeCollection {
  readonly size: number;
  readonly distance: string;
  /** Set for a collection of named vectors. */
  readonly named?: Record<string, unknown>;
  readonly points: Map<string | number, FakePoint>;
  readonly payloadIndexes: Map<string, unknown>;
  operations: number;
}

export interface FakePoint {
  readonly id: string | number;
  readonly vector: number[];
  readonly payload: Record<string, unknown>;
}

class QdrantHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function pointId(id: unknown): string | number {
  if (typeof id === "number" && Number.isSafeInteger(id) && id >= 0) return id;
  if (typeof id === "string" && UUID.test(id)) return id.toLowerCase();
  throw new QdrantHttpError(
    400,
    `Format error in JSON body: value ${JSON.stringify(id)} is not a valid point ID, valid values are either an unsigned integer or a UUID`,
  );
}

/** Supports what the adapter sends: `must` of `{key, match: {value} | {any}}`. Anything else is a 400. */
function matches(payload: Record<string, unknown>, filter: unknown): boolean {
  if (filter === undefined || filter === null) return true;
  const { must, ...others } = filter as { must?: unknown };
  if (Object.keys(others).length > 0) throw new QdrantHttpError(400, `fake Qdrant supports only "must" filters`);
  const conditions = must === undefined ? [] : Array.isArray(must) ? must : [must];
  return conditions.every((condition: unknown) => {
    const { key, match } = condition as { key?: unknown; match?: { value?: unknown; any?: unknown } };
    if (typeof key !== "string" || typeof match !== "object" || match === null) {
      throw new QdrantHttpError(400, `fake Qdrant supports only {key, match} conditions`);
    }
    const actual = payload[key];
    // As Qdrant does: a condition on an array field passes when any of its values matches.
    const values = Array.isArray(actual) ? (actual as unknown[]) : [actual];
    if ("value" in match) return values.some((value) => value === match.value);
    if (Array.isArray(match.any)) return values.some((value) => (match.any as unknown[]).includes(value));
    throw new QdrantHttpError(400, `fake Qdrant supports only match.value and match.any`);
  });
}

function selectPayload(payload: Record<string, unknown>, selector: unknown): Record<string, unknown> {
  if (Array.isArray(selector)) return Object.fromEntries(Object.entries(payload).filter(([key]) => selector.includes(key)));
  return payload;
}

function normalize(vector: number[]): number[] {
  const norm = Math.hypot(...vector) || 1;
  return vector.map((value) => value / norm);
}

function updateResult(collection: FakeCollection): unknown {
  collection.operations += 1;
  return { operation_id: collection.operations, status: "completed" };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

/** Reads (search, count, scroll, describe) are allowed with a read-only key; anything else writes. */
function isWrite(method: string, path: string): boolean {
  if (method === "GET") return false;
  return !(method === "POST" && /\/points\/(query|count|scroll|search)$/.test(path));
}

function sendText(response: ServerResponse, status: number, text: string): void {
  if (response.destroyed) return;
  response.writeHead(status, { "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(text) });
  response.end(text);
}

function sendEmpty(response: ServerResponse, status: number): void {
  if (response.destroyed) return;
  response.writeHead(status, { "content-length": 0 });
  response.end();
}

function send(response: ServerResponse, status: number, body: unknown): void {
  if (response.destroyed) return;
  const text = JSON.stringify(body);
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  response.end(text);
}
