/** `npm start`: load config, assemble the features and the app, listen, and shut down gracefully. */
import closeWithGrace from 'close-with-grace';
import { describeConfig, loadConfigOrExit } from './config/load.js';
import type { FastifyInstance } from 'fastify';
import { assemble, type Assembly } from './composition/features.js';
import { buildApp } from './http/app.js';
import { startIfEntryPoint } from './entry-point.js';
import { describeListenFailure } from './listen-errors.js';

export interface ServeOptions {
  /** Called after the app is built and before it listens (tests add routes here). */
  extendApp?: (app: FastifyInstance, assembly: Assembly) => void | Promise<void>;
}

export async function serve(options: ServeOptions = {}): Promise<void> {
  const config = loadConfigOrExit();
  const assembly = await assemble(config);
  const app = await buildApp(assembly);
  await options.extendApp?.(app, assembly);
  assembly.logger.info({ config: describeConfig(config) }, 'starting sluice');
  for (const notice of config.modelNotices) assembly.logger.info(notice);

  // Past the deadline close-with-grace exits 1, cutting what is still open (SHUTDOWN_GRACE_SECONDS).
  const closer = closeWithGrace({ delay: config.server.shutdownGraceMs, logger: { error: (m: unknown) => assembly.logger.error(m) } }, async ({ signal, err }) => {
    if (err) assembly.logger.error({ err }, 'shutting down after error');
    else assembly.logger.info({ signal }, 'shutting down');
    await app.close(); // stops accepting, waits for in-flight requests
    await assembly.close(); // stops workers, closes the database
  });

  try {
    await app.listen({ host: config.server.host, port: config.server.port });
  } catch (err) {
    const failure = describeListenFailure(err, config.server.host, config.server.port);
    if (!failure) throw err;
    closer.uninstall(); // its exit handler would end the process with 0
    await app.close();
    await assembly.close();
    throw failure;
  }
  if (config.workers.inProcess) assembly.startWorkers();
}

startIfEntryPoint(import.meta.url, () => serve());
