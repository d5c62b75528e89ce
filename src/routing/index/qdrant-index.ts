import { QdrantClient, type Schemas } from "@qdrant/js-client-rest";
import type { Logger } from "pino";
import { errorMessage, InvalidArgumentError } from "../../errors/index.js";
import { assertValidDimensions, VectorDimensionError } from "./index-errors.js";
import { skillPointId } from "./point-id.js";
import { fromQdrantError } from "./qdrant-errors.js";
import {
  audienceOf,
  filterMatchesNothing,
  MAX_SEARCH_LIMIT,
  SKILL_PAYLOAD_TYPE,
  type VectorIndex,
  type VectorIndexEntry,
  type VectorSearchFilter,
  type VectorSearchHit,
  type VectorSearchOptions,
} from "./vector-index.js";

export interface QdrantVectorIndexOptions {
  /** Qdrant's REST endpoint, e.g. `http://qdrant:6333` (QDRANT_URL). */
  readonly url: string;
  /** Sent as the `api-key` header when set (QDRANT_API_KEY). */
  readonly apiKey?: string;
  /**
   * Collection holding the skill points.
   * @default "skill_engine_skills"
   */
  readonly collection?: string;
  /**
   * Client-side deadline of every request. Short, because routing falls back to the embedded
   * indexes instead of waiting for a struggling Qdrant.
   * @default 5000
   */
  readonly timeoutMs?: number;
  /**
   * Points per upsert request, so a full re-index never sends one huge body.
   * @default 256
   */
  readonly batchSize?: number;
  readonly logger?: Logger;
}

/** Payload fields we filter on; Qdrant filters much faster (and plans better) with keyword indexes. */
const INDEXED_PAYLOAD_FIELDS = ["type", "status", "owner", "visibility", "audience"] as const;

/**
 * The scale-out vector index: one Qdrant collection with Cosine distance, one point per skill.
 *
 * Point ids are name-based UUIDs ({@link skillPointId}) because Qdrant accepts only UUIDs and
 * integers; the skill name travels in the payload and is what `search` returns. Every point
 * carries `type = "acquired_skill"` and every read filters on it, so the collection may be shared.
 * Points written before the `audience` payload field match no `audiences` filter until they are
 * upserted again (the router re-indexes every skill when its index layout changes).
 * Writes wait for Qdrant to apply them (`wait=true`), so a search right after an upsert sees it.
 * Needs Qdrant ≥ 1.10 (the Query API).
 */
export class QdrantVectorIndex implements VectorIndex {
  readonly kind = "qdrant";
  private readonly client: QdrantClient;
  private readonly collection: string;
  private readonly endpoint: string;
  private readonly batchSize: number;
  private readonly logger: Logger | undefined;
  private dimensions: number | undefined;

  constructor(options: QdrantVectorIndexOptions) {
    this.collection = options.collection ?? "skill_engine_skills";
    if (!/^[A-Za-z0-9_-]{1,255}$/.test(this.collection)) {
      throw new InvalidArgumentError("Qdrant collection", `must match [A-Za-z0-9_-]+: "${this.collection}"`);
    }
    this.endpoint = redactedEndpoint(options.url);
    this.batchSize = options.batchSize ?? 256;
    this.logger = options.logger;
    try {
      this.client = new QdrantClient({
        url: options.url,
        ...(options.apiKey ? { apiKey: options.apiKey } : {}),
        timeout: options.timeoutMs ?? 5_000,
        // The client's own check only console.warns, and does so on every construction.
        checkCompatibility: false,
      });
    } catch (error) {
      throw new InvalidArgumentError("QDRANT_URL", `cannot configure the Qdrant client: ${errorMessage(error)}`, { cause: error });
    }
  }

  async ensure(dimensions: number): Promise<void> {
    assertValidDimensions(dimensions);
    const current = await this.describeCollection();
    if (current && current.size === dimensions && current.distance === "Cosine") {
      this.dimensions = dimensions;
      await this.ensurePayloadIndexes();
      return;
    }
    if (current) {
      this.logger?.info(
        { collection: this.collection, from: current.size, to: dimensions },
        "re-creating the Qdrant collection for new vector dimensions",
      );
      await this.call("drop the old collection", () => this.client.deleteCollection(this.collection));
    } else {
      this.logger?.info({ collection: this.collection, dimensions }, "creating the Qdrant collection");
    }
    try {
      await this.client.createCollection(this.collection, { vectors: { size: dimensions, distance: "Cosine" } });
    } catch (error) {
      // Another replica of the service may have created it between our read and our create.
      const raced = await this.describeCollection();
      if (!raced || raced.size !== dimensions || raced.distance !== "Cosine") {
        throw fromQdrantError(error, "create the collection", this.endpoint);
      }
    }
    this.dimensions = dimensions;
    await this.ensurePayloadIndexes();
  }

  async upsert(entries: readonly VectorIndexEntry[]): Promise<void> {
    for (const entry of entries) this.checkDimensions(entry.vector);
    for (let start = 0; start < entries.length; start += this.batchSize) {
      const points = entries.slice(start, start + this.batchSize).map(({ id, vector, payload }) => ({
        id: skillPointId(id),
        vector: Array.from(vector),
        payload: {
          type: SKILL_PAYLOAD_TYPE,
          name: id,
          owner: payload.owner,
          visibility: payload.visibility,
          audience: audienceOf(payload.owner, payload.visibility),
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
    const points = ids.map((id) => skillPointId(id));
    await this.call("remove skill vectors", () => this.client.delete(this.collection, { wait: true, points }));
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

  async close(): Promise<void> {
    // The REST client holds only keep-alive sockets, which undici closes when idle.
  }

  /** The collection's single unnamed vector config, or undefined when the collection is missing. */
  private async describeCollection(): Promise<{ size: number | undefined; distance: string | undefined } | undefined> {
    let info: Schemas["CollectionInfo"];
    try {
      info = await this.client.getCollection(this.collection);
    } catch (error) {
      if ((error as { status?: unknown }).status === 404) return undefined;
      throw fromQdrantError(error, "read the collection", this.endpoint);
    }
    const vectors = info.config.params.vectors as Partial<Schemas["VectorParams"]> | undefined;
    // Named vectors (a map) are not ours: report no size so ensure() re-creates the collection.
    return {
      size: typeof vectors?.size === "number" ? vectors.size : undefined,
      distance: typeof vectors?.distance === "string" ? vectors.distance : undefined,
    };
  }

  private async ensurePayloadIndexes(): Promise<void> {
    for (const field of INDEXED_PAYLOAD_FIELDS) {
      // Idempotent in Qdrant: re-creating an existing keyword index is accepted.
      await this.call(`index payload field ${field}`, () =>
        this.client.createPayloadIndex(this.collection, { wait: true, field_name: field, field_schema: "keyword" }),
      );
    }
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

/** The URL as it may appear in logs and error messages: never with credentials in it. */
function redactedEndpoint(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    parsed.search = "";
    return parsed.toString().replace(/\/$/, "");
  } catch {
    // Not echoed: a malformed URL may still carry a key.
    throw new InvalidArgumentError("QDRANT_URL", "is not a valid http(s) URL");
  }
}
