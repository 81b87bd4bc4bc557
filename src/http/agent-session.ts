/**
 * The coding agent's session a request belongs to: Claude Code sends
 * `X-Claude-Code-Session-Id` (a UUID) on every call of a session, and the usage record
 * keeps it. A value that is not a plain id (1–128 letters, digits, `.`, `_`, `:`, `-`) is
 * not kept: the header is informational, and never refuses a call.
 */
import type { FastifyRequest } from 'fastify';

export const AGENT_SESSION_HEADER = 'x-claude-code-session-id';

const SESSION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function agentSessionOf(request: FastifyRequest): string | undefined {
  const value = request.headers[AGENT_SESSION_HEADER];
  return typeof value === 'string' && SESSION_ID.test(value) ? value : undefined;
}
