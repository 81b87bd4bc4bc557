/**
 * Request schemas carry their own error wording (the `x-error` annotation), so a body the
 * validator refuses gets the message and `param` a client has always seen for that fault
 * (the spec's sentences, word for word). A schema node names its sentence per Ajv keyword.
 *
 * Ajv runs with `verbose: true` so that an error carries the value that failed (for "got a
 * string") and the schema node it failed on (for the wording); that costs nothing on a
 * valid body. With several faults in one body Ajv reports the first in its own order:
 * keywords that apply to every type (allOf, if/else) first, then the type's own
 * (required, then properties in declaration order).
 */
import type { TSchema } from '@sinclair/typebox';

export const WORDING_KEYWORD = 'x-error';

import { describe } from '../domain/shared/describe.js';

/**
 * Templates by failing Ajv keyword (`type`, `minLength`, `enum`, ...), with fallbacks:
 * `null` when the value is null (a required field sent as null is "required"), `missing`
 * when a required property is absent (default `{param} is required`), `default` for any
 * other keyword. Placeholders: `{param}`, `{got}` (a string, an array, ...), `{value}`
 * (the value as text), `{count}` (an array's length). `param` replaces the reported param
 * (an element's fault named after its array); `code` replaces `invalid_request_error`.
 */
export interface Wording {
  default?: string;
  null?: string;
  missing?: string;
  param?: string;
  code?: string;
  [keyword: string]: string | undefined;
}

/** The schema with its wording attached (an OpenAPI `x-` extension, ignored by serializers). */
export const worded = <T extends TSchema>(schema: T, wording: Wording): T => ({ ...schema, [WORDING_KEYWORD]: wording });

/** The parts of an Ajv error this reads (Fastify passes Ajv's errors through unchanged). */
export interface ValidationIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
  data?: unknown;
  parentSchema?: Record<string, unknown>;
}

export interface WordedFault {
  message: string;
  param: string | null;
  code: string;
}

/** `/messages/0/content` → `messages[0].content`, the way errors name a field. */
export function pointerToParam(pointer: string, extra?: string): string | null {
  const parts = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) parts.push(extra);
  let param = '';
  for (const part of parts) param += /^\d+$/.test(part) && param !== '' ? `[${part}]` : param === '' ? part : `.${part}`;
  return param === '' ? null : param;
}

const own = (wording: Wording, key: string): string | undefined => (Object.hasOwn(wording, key) ? wording[key] : undefined);

function fill(template: string, param: string | null, data: unknown): string {
  return template.replace(/\{(param|got|value|count)\}/g, (_m, name: string) => {
    if (name === 'param') return param ?? 'request body';
    if (name === 'got') return describe(data);
    if (name === 'count') return String(Array.isArray(data) ? data.length : 0);
    return String(data);
  });
}

function wordingOf(issue: ValidationIssue, missing: string | null): Wording | undefined {
  const node = missing === null ? issue.parentSchema : (issue.parentSchema?.properties as Record<string, unknown> | undefined)?.[missing];
  const wording = (node as Record<string, unknown> | undefined)?.[WORDING_KEYWORD];
  return typeof wording === 'object' && wording !== null ? (wording as Wording) : undefined;
}

/** Fastify's fallback for schemas without wording (admin bodies, params, query strings). */
function genericFault(issue: ValidationIssue, context: string, missing: string | null, extra: string | null): WordedFault {
  const param = pointerToParam(issue.instancePath, missing ?? extra ?? undefined);
  if (missing) return { message: `${missing} is required`, param, code: 'invalid_request_error' };
  if (extra) return { message: `Unrecognized request argument supplied: ${param}`, param, code: 'invalid_request_error' };
  const where = context === 'body' ? '' : `${context} `;
  return { message: `${where}${param ?? `request ${context}`} ${issue.message ?? 'is invalid'}`, param, code: 'invalid_request_error' };
}

/** The first Ajv error of a refused request part → the message, param and code a client sees. */
export function wordValidationIssue(issue: ValidationIssue, context: string): WordedFault {
  const missing = typeof issue.params.missingProperty === 'string' ? issue.params.missingProperty : null;
  const extra = typeof issue.params.additionalProperty === 'string' ? issue.params.additionalProperty : null;
  const wording = wordingOf(issue, missing);
  if (!wording) return genericFault(issue, context, missing, extra);
  const param = own(wording, 'param') ?? pointerToParam(issue.instancePath, missing ?? undefined);
  const data = missing === null ? issue.data : undefined;
  const template =
    (missing !== null ? (own(wording, 'missing') ?? '{param} is required') : undefined) ??
    (data === null ? own(wording, 'null') : undefined) ??
    own(wording, issue.keyword) ??
    own(wording, 'default') ??
    `{param} ${issue.message ?? 'is invalid'}`;
  return { message: fill(template, param, data), param, code: own(wording, 'code') ?? 'invalid_request_error' };
}

/** The OpenAPI document without the wording annotations: they are this server's, not its clients'. */
export function withoutWording<T>(node: T): T {
  if (Array.isArray(node)) return node.map(withoutWording) as T;
  if (typeof node !== 'object' || node === null) return node;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) if (key !== WORDING_KEYWORD) copy[key] = withoutWording(value);
  return copy as T;
}
