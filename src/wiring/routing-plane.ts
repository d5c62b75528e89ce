import path from "node:path";
import type { Logger } from "pino";
import type { SkillEngineConfig } from "../config/index.js";
import { REGISTRY_FILE, type SkillRegistry } from "../control/index.js";
import {
  CachedEmbedder,
  type Embedder,
  MiniLmEmbedder,
  OpenAiEmbedder,
  SqliteEmbeddingStore,
  UseLiteEmbedder,
} from "../embedding/index.js";
import type { ServiceMetrics } from "../observability/index.js";
import {
  failsFallbackFilter,
  failsQualityFilter,
  QualityCounters,
  RegistrationGate,
  RoutingService,
  type SkillDescriber,
  SkillRouter,
} from "../routing/index.js";
import {
  FallbackVectorIndex,
  type FallbackVectorIndexOptions,
  KeywordIndex,
  QdrantVectorIndex,
  qdrantCollectionName,
  SqliteVecIndex,
  type VectorIndex,
} from "../search/index.js";
import { openRegistryDatabase } from "../sqlite/index.js";

/**
 * Routing beside the registry: its own connection to registry.db (WAL lets both write), the
 * embedded indexes (sqlite-vec, FTS5) always, Qdrant in front of them when configured.
 */
export async function startRouting(
  config: SkillEngineConfig,
  logger: Logger,
  registry: SkillRegistry,
  wiring: { readonly metrics?: ServiceMetrics; readonly describe?: SkillDescriber } = {},
): Promise<{ service: RoutingService; gate: RegistrationGate; embedder: Embedder; close(): Promise<void> }> {
  const { metrics, describe } = wiring;
  const db = openRegistryDatabase(path.join(config.home, REGISTRY_FILE), { durable: false, cacheKib: config.sqliteCacheKib });
  const backend =
    config.embedder.kind === "openai"
      ? await OpenAiEmbedder.create({
          baseUrl: config.embedder.baseUrl,
          model: config.embedder.model,
          timeoutMs: 30_000,
          ...(config.embedder.apiKey ? { apiKey: config.embedder.apiKey } : {}),
          ...(config.embedder.dimensions ? { dimensions: config.embedder.dimensions } : {}),
        })
      : config.embedder.kind === "use-lite"
        ? new UseLiteEmbedder({ logger })
        : new MiniLmEmbedder({ logger, runtime: config.embedder.runtime });
  const embedder = new CachedEmbedder(backend, new SqliteEmbeddingStore(db));
  const vectors = withQdrant(config, new SqliteVecIndex(db, { logger }), qdrantCollectionName(embedder.modelId, embedder.dimensions), {
    logger,
    onUnavailable: (reason) => metrics?.recordVectorIndexUnavailable(reason),
  });
  const keywords = new KeywordIndex(db, { logger });
  const router = new SkillRouter({
    db,
    embedder,
    vectors,
    keywords,
    logger,
    vectorWeight: config.routing.vectorWeight,
    splitClauses: config.routing.splitClauses,
  });
  const counters = new QualityCounters(db);
  const service = new RoutingService(
    router,
    registry,
    config.healthPolicy,
    logger,
    { minRelevance: config.routing.minRelevance, ...(describe ? { describe } : {}) },
    counters,
  );
  // RegisterSkill's routing gate ranks over the same indexes, fused and floored as routes are (docs/routing.md#the-routing-gate).
  const gate = new RegistrationGate({
    db,
    embedder,
    vectors,
    keywords,
    registry,
    logger,
    vectorWeight: config.routing.vectorWeight,
    minRelevance: config.routing.minRelevance,
    settled: () => service.settled(),
    excluded: (name) => failsQualityFilter(router.quality(name)) || failsFallbackFilter(counters.get(name)),
  });
  await service.init();
  return {
    service,
    gate,
    embedder,
    async close() {
      // Indexing handed over by the last changes finishes before the database closes.
      await service.settled();
      await (backend as { close?: () => Promise<void> }).close?.();
      await vectors.close();
      if (db.open) db.close();
    },
  };
}

/**
 * The embedded vector index alone, or a Qdrant collection in front of it when QDRANT_URL is set
 * (docs/routing.md#qdrant): the embedded table stays the fallback and the source Qdrant is filled from.
 */
export function withQdrant(
  config: SkillEngineConfig,
  embedded: SqliteVecIndex,
  collection: string,
  fallback: FallbackVectorIndexOptions,
): VectorIndex {
  return config.qdrant
    ? new FallbackVectorIndex(
        new QdrantVectorIndex({
          url: config.qdrant.url,
          collection,
          logger: fallback.logger,
          ...(config.qdrant.apiKey ? { apiKey: config.qdrant.apiKey } : {}),
        }),
        embedded,
        fallback,
      )
    : embedded;
}
