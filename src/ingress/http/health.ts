/**
 * GET /healthz (the process answers), GET /readyz (it can take and deliver work: 503 with the
 * reasons otherwise) and GET /metrics (Prometheus text), all without a token: probes and
 * scrapers have none. Nothing in them is secret: names of upstreams, counts and states.
 */
import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import type { aliveSchema, notReadySchema, readySchema } from '../../api/responses.js';
import type { Readiness } from '../../observability/health.js';

export interface HttpHealth {
  readiness(): Readiness;
}

export interface HttpMetricsSource {
  /** The registry's content type (text/plain; version=0.0.4). */
  readonly contentType: string;
  /** The exposition text. */
  text(): Promise<string>;
}

export function registerHealthRoutes(app: FastifyInstance, health: HttpHealth | undefined, metrics: HttpMetricsSource | undefined): void {
  app.get('/healthz', async (): Promise<z.output<typeof aliveSchema>> => ({ status: 'ok' }));
  if (health) {
    app.get('/readyz', async (_request, reply) => {
      const r = health.readiness();
      // Which upstreams can send: `smppd route` reads it to say where a send would go now.
      const body: z.output<typeof readySchema> | z.output<typeof notReadySchema> = r.ready
        ? { status: 'ready', upstreams: r.upstreams }
        : { status: 'not ready', reasons: r.reasons, upstreams: r.upstreams };
      return reply.code(r.ready ? 200 : 503).send(body);
    });
  }
  if (metrics) registerMetricsRoute(app, metrics);
}

export function registerMetricsRoute(app: FastifyInstance, metrics: HttpMetricsSource): void {
  app.get('/metrics', async (_request, reply) => reply.header('content-type', metrics.contentType).send(await metrics.text()));
}
