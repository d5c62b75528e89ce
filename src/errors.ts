// Temporary shim during the refactor; removed before commit.
export * from "./errors/index.js";
