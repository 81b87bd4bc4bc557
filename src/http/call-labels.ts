/**
 * Labels a wire call from its request: the `x-sluice-tags` header, the body's tags and
 * end user, and the caller's key's default tags (src/wire/call-labels.ts), onto the call
 * context its usage record and request log read.
 */
import type { FastifyRequest } from 'fastify';
import type { Principal } from '../domain/identity/caller.js';
import { TAGS_HEADER } from '../domain/billing/call-tags.js';
import { callLabelsOf, headerTags } from '../wire/call-labels.js';
import type { WireCallContext, WireFormat } from '../wire/wire-format.js';

export function labelCall(context: WireCallContext, request: FastifyRequest, format: WireFormat, body: unknown, principal: Principal): void {
  const { tags, endUser } = callLabelsOf(format, body, headerTags(request.headers[TAGS_HEADER]), principal.policy);
  if (tags !== undefined) context.tags = tags;
  if (endUser !== undefined) context.endUser = endUser;
}
