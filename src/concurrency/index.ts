/** Small concurrency primitives shared by the planes. The only way in. */
export { KeyedMutex } from "./keyed-mutex.js";
export { Slots } from "./slots.js";
