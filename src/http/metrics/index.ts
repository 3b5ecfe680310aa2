export { createMetrics, type Metrics } from './create-metrics.js';
export { metricsMiddleware, observeRequest } from './metrics-middleware.js';
export { registerMetricsRoute } from './metrics-route.js';
export { createSandboxMetrics, type ForeignResourceCounts, type SandboxMetrics, type SandboxStatusCounts, type WarmPoolCounts } from './sandbox-metrics.js';
export { createLlmMetrics, type LlmCallSample } from './llm-metrics.js';
