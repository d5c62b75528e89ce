import { QdrantClient, type Schemas } from "@qdrant/js-client-rest";
import type { Logger } from "pino";
import { errorMessage, InvalidArgumentError } from "../errors/index.js";
import { assertValidDimensions, VectorDimensionError, VectorIndexUnavailableError } from "./index-errors.js";
import { skillPointId } from "./point-id.js";
import { parseQdrantUrl } from "./qdrant-endpoint.js";
import { fromQdrantError } from "./qdrant-errors.js";
import {
  audiencesOf,
  filterMatchesNothing,
  MAX_SEARCH_LIMIT,
  SKILL_PAYLOAD_TYPE,
  type SkillIndexPayload,
  type VectorIndex,
  type VectorIndexEntry,
  type VectorSearchFilter,
  type VectorSearchHit,
  type VectorSearchOptions,
} from "./vector-index.js";

export interface QdrantVectorIndexOptions {
  /** Qdrant's REST endpoint, e.g. `http://qdrant:6333` or `https://gw.example.com/qdrant` (QDRANT_URL). */
  readonly url: string;
  /** Sent as the `api-key` header when set (QDRANT_API_KEY). */
  readonly apiKey?: string;
  /**
   * Collection holding the skill points. The service names it after the embedder
   * ({@link qdrantCollectionName}), so a change of model or size gets a collection of its own.
   * @default "skill_engine_skills"
   */
  readonly collection?: string;
  /**
   * Client-side deadline of every search and write. Short, because routing falls back to the
   * embedded indexes instead of waiting for a struggling Qdrant.
   * @default 5000
   */
  readonly timeoutMs?: number;
  /**
   * Deadline of creating the collection and its payload indexes, which Qdrant builds over every
   * segment before answering (`wait=true`): far longer than a search on a large collection.
   * @default 120000
   */
  readonly adminTimeoutMs?: number;
  /**
   * At most this many points per upsert request.
   * @default 256
   */
  readonly batchSize?: number;
  /**
   * At most this many bytes of JSON per upsert request; Qdrant refuses bodies over 32 MiB by
   * default, and a vector of thousands of dimensions is ~20 bytes a dimension as JSON.
   * @default 8 MiB
   */
  readonly maxRequestBytes?: number;
  readonly logger?: Logger;
}

/** Payload fields we filter on; Qdrant filters much faster (and plans better) with keyword indexes. */
const INDEXED_PAYLOAD_FIELDS = ["type", "status", "owner", "visibility", "audience"] as const;
/** JSON bytes of one vector component at worst (`-0.012345678901234567,`) and of one point's payload and envelope. */
const BYTES_PER_DIMENSION = 24;
const BYTES_PER_POINT = 1024;
const SCROLL_PAGE = 1000;

/**
 * The collection for an embedder: `<base>_<model>_<dimensions>`, the model id reduced to the
 * characters Qdrant allows. Vectors of two models never share a collection, and a new model finds
 * an empty one the service fills, instead of one it would have to delete (docs/routing.md#qdrant).
 */
export function qdrantCollectionName(modelId: string, dimensions: number, base = "skill_engine_skills"): string {
  const model = modelId
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 120);
  return `${base}_${model}_${dimensions}`;
}

/**
 * The scale-out vector index: one Qdrant collection with Cosine distance, one point per entry.
 *
 * Point ids are name-based UUIDs ({@link skillPointId}) because Qdrant accepts only UUIDs and
 * integers; the entry id travels in the payload (`name`) and is what `search` returns. Every point
 * carries `type = "acquired_skill"` and every read filters on it, so the collection may be shared;
 * and a collection the service did not create in the shape it needs is never deleted: `ensure`
 * refuses it with a message saying what it found. Writes wait for Qdrant to apply them
 * (`wait=true`), so a search right after an upsert sees it. Needs Qdrant ≥ 1.10 (the Query API).
 */
export class QdrantVectorIndex implements VectorIndex {
  readonly kind = "qdrant";
  private readonly client: QdrantClient;
  private readonly adminClient: QdrantClient;
  private readonly collection: string;
  private readonly endpoint: string;
  private readonly batchSize: number;
  private readonly maxRequestBytes: number;
  private readonly logger: Logger | undefined;
  private dimensions: number | undefined;

  constructor(options: QdrantVectorIndexOptions) {
    this.collection = options.collection ?? "skill_engine_skills";
    if (!/^[A-Za-z0-9_-]{1,255}$/.test(this.collection)) {
      throw new InvalidArgumentError("Qdrant collection", `must match [A-Za-z0-9_-]+: "${this.collection}"`);
    }
    const endpoint = parseQdrantUrl(options.url);
    this.endpoint = endpoint.display;
    this.batchSize = options.batchSize ?? 256;
    this.maxRequestBytes = options.maxRequestBytes ?? 8 * 1024 * 1024;
    this.logger = options.logger;
    const client = (timeout: number): QdrantClient => {
      try {
        return new QdrantClient({
          host: endpoint.host,
          port: endpoint.port,
          https: endpoint.https,
          ...(endpoint.prefix ? { prefix: endpoint.prefix } : {}),
          ...(options.apiKey ? { apiKey: options.apiKey } : {}),
          timeout,
          // The client's own check only console.warns, and does so on every construction.
          checkCompatibility: false,
        });
      } catch (error) {
        throw new InvalidArgumentError("QDRANT_URL", `cannot configure the Qdrant client: ${errorMessage(error)}`, { cause: error });
      }
    };
    this.client = client(options.timeoutMs ?? 5_000);
    this.adminClient = client(options.adminTimeoutMs ?? 120_000);
  }

  /**
   * Creates the collection when it is missing, and its payload indexes. A collection of that name
   * with other vector parameters (another size or distance, or named vectors) is left alone and
   * refused: it is not this service's to delete.
   */
  async ensure(dimensions: number): Promise<void> {
    assertValidDimensions(dimensions);
    const current = await this.describeCollection();
    if (current) {
      if (current.size !== dimensions || current.distance !== "Cosine") {
        throw new VectorIndexUnavailableError(
          "qdrant",
          `the Qdrant collection "${this.collection}" at ${this.endpoint} holds ${describeParams(current)}, not ${dimensions}-dimensional Cosine vectors; ` +
            "it is left untouched: remove it yourself if it is a leftover, or point the service at another collection",
          { reason: "incompatible" },
        );
      }
    } else {
      this.logger?.info({ collection: this.collection, dimensions, endpoint: this.endpoint }, "creating the Qdrant collection");
      try {
        await this.adminClient.createCollection(this.collection, { vectors: { size: dimensions, distance: "Cosine" } });
      } catch (error) {
        // Another replica of the service may have created it between our read and our create.
        const raced = await this.describeCollection();
        if (!raced || raced.size !== dimensions || raced.distance !== "Cosine") {
          throw fromQdrantError(error, "create the collection", this.endpoint);
        }
      }
    }
    this.dimensions = dimensions;
    for (const field of INDEXED_PAYLOAD_FIELDS) {
      // Idempotent in Qdrant: re-creating an existing keyword index is accepted.
      await this.call(`index payload field ${field}`, () =>
        this.adminClient.createPayloadIndex(this.collection, { wait: true, field_name: field, field_schema: "keyword" }),
      );
    }
  }

  async upsert(entries: readonly VectorIndexEntry[]): Promise<void> {
    for (const entry of entries) this.checkDimensions(entry.vector);
    const perRequest = Math.max(
      1,
      Math.min(
        this.batchSize,
        Math.floor(this.maxRequestBytes / (BYTES_PER_POINT + (entries[0]?.vector.length ?? 0) * BYTES_PER_DIMENSION)),
      ),
    );
    for (let start = 0; start < entries.length; start += perRequest) {
      const points = entries.slice(start, start + perRequest).map(({ id, vector, payload }) => ({
        id: skillPointId(id),
        vector: Array.from(vector),
        payload: {
          type: SKILL_PAYLOAD_TYPE,
          name: id,
          owner: payload.owner,
          visibility: payload.visibility,
          // An array: Qdrant's `match: {any}` passes a point when any of its values is listed
          // (docs/routing.md#scoping), so owner, grantees and public are one condition.
          audience: audiencesOf(payload),
          grant_audiences: [...(payload.grantAudiences ?? [])],
          status: payload.status,
        },
      }));
      await this.call("upsert skill vectors", () => this.client.upsert(this.collection, { wait: true, points }));
    }
    if (entries.length > 0) this.logger?.debug({ collection: this.collection, count: entries.length }, "upserted skill vectors");
  }

  async remove(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    // Deleting an id Qdrant never saw is a success, which is exactly the port's contract.
    for (let start = 0; start < ids.length; start += SCROLL_PAGE) {
      const points = ids.slice(start, start + SCROLL_PAGE).map((id) => skillPointId(id));
      await this.call("remove skill vectors", () => this.client.delete(this.collection, { wait: true, points }));
    }
  }

  async search(vector: Float32Array, options: VectorSearchOptions): Promise<VectorSearchHit[]> {
    this.checkDimensions(vector);
    const limit = Math.min(Math.floor(options.limit), MAX_SEARCH_LIMIT);
    // `!(limit > 0)` so that NaN also means "no hits" instead of reaching SQL or the wire.
    if (!(limit > 0) || filterMatchesNothing(options.filter)) return [];
    const response = await this.call("search skill vectors", () =>
      this.client.query(this.collection, {
        query: Array.from(vector),
        filter: toQdrantFilter(options.filter),
        limit,
        with_payload: ["name"],
      }),
    );
    const hits: VectorSearchHit[] = [];
    for (const point of response.points) {
      const name = point.payload?.["name"];
      if (typeof name === "string") hits.push({ id: name, score: point.score });
    }
    return hits;
  }

  async count(): Promise<number> {
    const result = await this.call("count skill vectors", () =>
      this.client.count(this.collection, { filter: toQdrantFilter(undefined), exact: true }),
    );
    return result.count;
  }

  async ids(): Promise<string[]> {
    const ids: string[] = [];
    for await (const page of this.pages(false)) for (const point of page) ids.push(point.id);
    return ids.sort();
  }

  async *scan(batchSize: number): AsyncIterable<VectorIndexEntry[]> {
    for await (const page of this.pages(true, batchSize)) {
      yield page.filter((point): point is ScrolledPoint & { vector: Float32Array } => point.vector !== undefined);
    }
  }

  async close(): Promise<void> {
    // The REST client holds only keep-alive sockets, which undici closes when idle.
  }

  /** Every skill point, a page at a time (Qdrant's scroll), as entries keyed by the payload's name. */
  private async *pages(withVectors: boolean, pageSize = SCROLL_PAGE): AsyncIterable<ScrolledPoint[]> {
    let offset: string | number | undefined;
    do {
      const page = await this.call("list skill vectors", () =>
        this.client.scroll(this.collection, {
          filter: toQdrantFilter(undefined),
          limit: Math.max(1, Math.floor(pageSize)),
          with_payload: true,
          with_vector: withVectors,
          ...(offset !== undefined ? { offset } : {}),
        }),
      );
      yield page.points.flatMap((point) => {
        const entry = toScrolledPoint(point);
        return entry ? [entry] : [];
      });
      const next: unknown = page.next_page_offset;
      offset = typeof next === "string" || typeof next === "number" ? next : undefined;
    } while (offset !== undefined);
  }

  /** The collection's single unnamed vector config, or undefined when the collection is missing. */
  private async describeCollection(): Promise<CollectionParams | undefined> {
    let info: Schemas["CollectionInfo"];
    try {
      info = await this.adminClient.getCollection(this.collection);
    } catch (error) {
      if ((error as { status?: unknown }).status === 404) return undefined;
      throw fromQdrantError(error, "read the collection", this.endpoint);
    }
    const vectors = info.config.params.vectors as Partial<Schemas["VectorParams"]> | Record<string, unknown> | undefined;
    const single = vectors !== undefined && typeof (vectors as { size?: unknown }).size === "number";
    return {
      size: single ? (vectors as Schemas["VectorParams"]).size : undefined,
      distance: single ? (vectors as Schemas["VectorParams"]).distance : undefined,
      named: !single && vectors !== undefined ? Object.keys(vectors) : [],
    };
  }

  private checkDimensions(vector: Float32Array): void {
    if (this.dimensions !== undefined && vector.length !== this.dimensions) {
      throw new VectorDimensionError(this.dimensions, vector.length);
    }
  }

  private async call<T>(action: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw fromQdrantError(error, action, this.endpoint);
    }
  }
}

interface CollectionParams {
  readonly size: number | undefined;
  readonly distance: string | undefined;
  /** Names of the vectors of a collection with named vectors (not ours). */
  readonly named: string[];
}

interface ScrolledPoint {
  readonly id: string;
  readonly vector?: Float32Array;
  readonly payload: SkillIndexPayload;
}

function describeParams(params: CollectionParams): string {
  if (params.named.length > 0) return `named vectors (${params.named.join(", ")})`;
  return `${params.size ?? "?"}-dimensional ${params.distance ?? "?"} vectors`;
}

/** A scrolled point as an entry: its name, vector and payload; points that are not skills' are skipped. */
function toScrolledPoint(point: Schemas["Record"]): ScrolledPoint | undefined {
  const payload = point.payload ?? {};
  const name = payload["name"];
  if (typeof name !== "string") return undefined;
  const vector =
    Array.isArray(point.vector) && point.vector.every((v) => typeof v === "number") ? Float32Array.from(point.vector) : undefined;
  const granted = payload["grant_audiences"];
  const grantAudiences = Array.isArray(granted) ? granted.filter((value): value is string => typeof value === "string") : [];
  return {
    id: name,
    ...(vector ? { vector } : {}),
    payload: {
      type: SKILL_PAYLOAD_TYPE,
      name,
      owner: String(payload["owner"] ?? ""),
      visibility: payload["visibility"] === "public" ? "public" : payload["visibility"] === "internal" ? "internal" : "private",
      status: String(payload["status"] ?? ""),
      ...(grantAudiences.length > 0 ? { grantAudiences } : {}),
    },
  };
}

/** Every read is restricted to skill points, then to the caller's allowlists (AND). */
function toQdrantFilter(filter: VectorSearchFilter | undefined): Schemas["Filter"] {
  const must: Schemas["FieldCondition"][] = [{ key: "type", match: { value: SKILL_PAYLOAD_TYPE } }];
  const allow = (key: string, values: readonly string[] | undefined): void => {
    if (values !== undefined) must.push({ key, match: { any: [...values] } });
  };
  allow("status", filter?.statuses);
  allow("owner", filter?.owners);
  allow("visibility", filter?.visibility);
  allow("audience", filter?.audiences);
  return { must };
}
