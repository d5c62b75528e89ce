/** Page sizes and page tokens every list RPC shares (docs/api.md#pagination). The only way in. */
export {
  ascending,
  compareKeys,
  type Listing,
  MAX_PAGE_TOKEN_CHARS,
  openPage,
  type Page,
  PAGE_SIZE,
  type PageFilters,
  type PageKey,
  type PageRequest,
  PageWindow,
} from "./page-token.js";
