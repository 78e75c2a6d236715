/** Prometheus metrics: request counts and latency per operationId, plus the process defaults. */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface HttpMetrics {
  registry: Registry;
  observe(operation: string, method: string, status: number, seconds: number): void;
}

export function createHttpMetrics(): HttpMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'convene_http_requests_total',
    help: 'HTTP requests answered, by operationId, method and status',
    labelNames: ['operation', 'method', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'convene_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by operationId',
    labelNames: ['operation'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  return {
    registry,
    observe(operation, method, status, seconds) {
      requests.inc({ operation, method, status: String(status) });
      duration.observe({ operation }, seconds);
    },
  };
}
