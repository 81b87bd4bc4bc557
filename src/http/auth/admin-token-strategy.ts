/** The admin API's strategy: `Authorization: Bearer $SLUICE_ADMIN_TOKEN` admits the operator. */
import type { FastifyRequest } from 'fastify';
import { operatorPrincipal, type Caller } from '../../domain/identity/caller.js';
import type { Meter } from '../../domain/billing/meter.js';
import { secretsEqual } from '../../domain/identity/api-keys.js';
import { AppError } from '../../domain/shared/errors.js';
import { headerOf, type AuthStrategy } from './strategy.js';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

export class AdminTokenStrategy implements AuthStrategy {
  readonly needs = 'headers';
  readonly #caller: Caller;

  constructor(
    private readonly token: string,
    meter: Meter,
  ) {
    this.#caller = { principal: operatorPrincipal(), meter };
  }

  authenticate(request: FastifyRequest): Caller {
    const authorization = headerOf(request, 'authorization');
    const match = authorization === undefined ? null : BEARER.exec(authorization);
    if (!match) throw new AppError('authentication', 'Missing authentication headers', { code: 'missing_admin_token' });
    if (!secretsEqual(match[1]!, this.token)) throw new AppError('permission', 'Invalid credentials', { code: 'invalid_admin_token' });
    return this.#caller;
  }
}
