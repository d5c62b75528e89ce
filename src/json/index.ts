export { jsonDepth } from "./json-depth.js";
