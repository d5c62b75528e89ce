/** Observability: Prometheus metrics and their scrape endpoint. The only way in. */
export { ServiceMetrics, type MetricsSources, type RunOutcome } from "./metrics.js";
export { HostAllowList } from "./allowed-hosts.js";
export { type HttpMount, type MetricsServerOptions, startMetricsServer } from "./metrics-server.js";
export { type LessonCount, PlaybookMetrics } from "./playbook-metrics.js";
export { SourceMetrics } from "./source-metrics.js";
export { LearningMetrics } from "./learning-metrics.js";
export { EnvironmentMetrics } from "./environment-metrics.js";
