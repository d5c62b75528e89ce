export { byteSize } from "./byte-size.js";
