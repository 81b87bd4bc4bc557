/** The operations routes (hidden from the OpenAPI document, which is for API clients). */
import { Type } from '@sinclair/typebox';

export const Health = Type.Object({ status: Type.Literal('ok') });

export const Readiness = Type.Object({
  status: Type.String({ description: '`ready` (200) or `not_ready` (503)' }),
  checks: Type.Record(Type.String(), Type.String()),
  upstreams: Type.Optional(
    Type.Record(Type.String(), Type.String(), {
      description: 'per upstream model: `reachable` or `unreachable since <ISO time> (<code>)`; informs only, never makes the replica not ready',
    }),
  ),
  deployments: Type.Optional(
    Type.Record(Type.String(), Type.String(), {
      description: 'per deployment of a model with several: `ready`, `cooling down until <ISO time>` or `unreachable since <ISO time> (<code>)`; informs only',
    }),
  ),
  runtimes: Type.Optional(
    Type.Record(Type.String(), Type.String(), {
      description: 'per in-process runtime that a pulled model needs and this install lacks: what is missing and the command that adds it; informs only',
    }),
  ),
  notes: Type.Optional(
    Type.Record(Type.String(), Type.String(), {
      description: 'what a feature reports beside its checks (the request log entries dropped while its store was slow or down); informs only',
    }),
  ),
});

export const MetricsText = Type.String({ description: 'Prometheus text exposition format' });

export const OpenApiDocument = Type.Object({}, { additionalProperties: true, description: 'this document' });
