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
export { documentText, failsQualityFilter, SkillRouter, type RouteMode, vectorPayloadOf } from "./skill-router.js";
export { RegistrationGate, type RegistrationGateOptions } from "./registration-gate.js";
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
export {
  DEFAULT_HARDENING,
  type Hardening,
  hardenedDescription,
  instructionsText,
  toolDefinition,
  toolDescription,
} from "./hardened-description.js";
