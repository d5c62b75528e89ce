/** Routing: embeddings, indexes, fusion, learning from use, and the RouteSkills use case. The only way in. */
export {
  RoutingService,
  ROUTE_LIMITS,
  type RoutedSkill,
  type RouteFeedbackInput,
  type RouteRequest,
  type RoutingOptions,
  type SkillDescriber,
  type ToolFormat,
} from "./routing-service.js";
export { failsFallbackFilter, QualityCounters, type SkillQuality } from "./quality-counters.js";
export { documentText, SkillRouter, type RouteMode } from "./skill-router.js";
export {
  CachedEmbedder,
  MiniLmEmbedder,
  OpenAiEmbedder,
  SqliteEmbeddingStore,
  UseLiteEmbedder,
  type Embedder,
} from "../embedding/index.js";
export {
  FallbackVectorIndex,
  KeywordIndex,
  normalizedScoreFusion,
  QdrantVectorIndex,
  qdrantCollectionName,
  SqliteVecIndex,
  type VectorIndex,
} from "../search/index.js";
export { hardenedDescription, toolDefinition } from "./hardened-description.js";
