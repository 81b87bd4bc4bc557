/**
 * The console's built files (`npm run build` writes them to dist/console): hashed assets
 * cached for a year, index.html never cached, brotli/gzip copies served when the browser
 * accepts them. Every console answer carries CONSOLE_SECURITY_HEADERS (scopes/console.ts).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';
import { AppError } from '../../../domain/shared/errors.js';

/** Only the server's own origin: no inline script or style, no frames, no other hosts. */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "media-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export const CONSOLE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};

/** dist/console beside the compiled server (dist/src/…), or under dist/ when run from the sources. */
export function consoleBuildDir(): string {
  const root = fileURLToPath(new URL('../../../../', import.meta.url));
  return path.basename(root) === 'dist' ? path.join(root, 'console') : path.join(root, 'dist', 'console');
}

export async function registerConsoleAssets(app: FastifyInstance, { root }: { root: string }): Promise<void> {
  app.get('/console', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/console/', 302));
  if (!existsSync(path.join(root, 'index.html'))) {
    const notBuilt = async () => {
      throw new AppError('unavailable', 'The console is not built: run `npm run build`', { code: 'console_not_built' });
    };
    app.get('/console/', { schema: { hide: true } }, notBuilt);
    return;
  }
  await app.register(fastifyStatic, {
    root,
    prefix: '/console/',
    index: ['index.html'],
    preCompressed: true,
    wildcard: true,
    cacheControl: false,
    setHeaders(reply, file) {
      const hashed = path.basename(path.dirname(file)) === 'assets';
      reply.header('cache-control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
}

/** `GET /` from a browser goes to the console; API clients get the usual 404. */
export function registerRootRedirect(app: FastifyInstance): void {
  app.get('/', { schema: { hide: true } }, async (request, reply) => {
    const accept = request.headers.accept ?? '';
    if (accept.includes('text/html')) return reply.redirect('/console/', 302);
    return reply.callNotFound();
  });
}
