/** Routing indexes: the vector index port and its adapters, the keyword index, rank fusion. */
export {
  agentAudience,
  audienceOf,
  audiencesOf,
  filterMatchesNothing,
  MAX_SEARCH_LIMIT,
  PUBLIC_AUDIENCE,
  SKILL_PAYLOAD_TYPE,
  type SkillIndexPayload,
  type SkillVisibility,
  type VectorIndex,
  type VectorIndexEntry,
  type VectorSearchFilter,
  type VectorSearchHit,
  type VectorSearchOptions,
  userAudience,
} from "./vector-index.js";
export { SqliteVecIndex, type SqliteVecIndexOptions } from "./sqlite-vec-index.js";
export { QdrantVectorIndex, qdrantCollectionName, type QdrantVectorIndexOptions } from "./qdrant-index.js";
export { parseQdrantUrl, type QdrantEndpoint } from "./qdrant-endpoint.js";
export {
  KeywordIndex,
  type KeywordColumnWeights,
  type KeywordDocument,
  type KeywordHit,
  type KeywordIndexOptions,
  type KeywordSearchOptions,
} from "./keyword-index.js";
export { DEFAULT_RRF_K, reciprocalRankFusion, type FusedItem, type FusionOptions, type RankedList } from "./fusion.js";
export { normalizedScoreFusion, type ScoreFusionOptions } from "./score-fusion.js";
export { VectorDimensionError, VectorIndexUnavailableError, type UnavailableReason } from "./index-errors.js";
export { skillPointId } from "./point-id.js";
export { nameWords, queryWords } from "./name-tokens.js";
export { SEARCH_QUERY_LIMITS, searchedQuery, type SearchedQuery } from "./long-query.js";
export { FallbackVectorIndex, type FallbackVectorIndexOptions } from "./fallback-vector-index.js";
