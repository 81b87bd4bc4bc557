/** `npm start`: load config, build the container and the app, listen, and shut down gracefully. */
import closeWithGrace from 'close-with-grace';
import { describeConfig, loadConfigOrExit } from './config/load.js';
import type { FastifyInstance } from 'fastify';
import { createContainer, type Container } from './container.js';
import { buildApp } from './http/app.js';
import { startIfEntryPoint } from './entry-point.js';
import { describeListenFailure } from './listen-errors.js';

export interface ServeOptions {
  /** Called after the app is built and before it listens (tests add routes here). */
  extendApp?: (app: FastifyInstance, container: Container) => void | Promise<void>;
}

export async function serve(options: ServeOptions = {}): Promise<void> {
  const config = loadConfigOrExit();
  const container = await createContainer(config);
  const app = await buildApp(container);
  await options.extendApp?.(app, container);
  container.logger.info({ config: describeConfig(config) }, 'starting sluice');
  for (const notice of config.modelNotices) container.logger.info(notice);

  // Past the deadline close-with-grace exits 1, cutting what is still open (SHUTDOWN_GRACE_SECONDS).
  const closer = closeWithGrace({ delay: config.server.shutdownGraceMs, logger: { error: (m: unknown) => container.logger.error(m) } }, async ({ signal, err }) => {
    if (err) container.logger.error({ err }, 'shutting down after error');
    else container.logger.info({ signal }, 'shutting down');
    await app.close(); // stops accepting, waits for in-flight requests
    await container.close(); // stops workers, closes the database
  });

  try {
    await app.listen({ host: config.server.host, port: config.server.port });
  } catch (err) {
    const failure = describeListenFailure(err, config.server.host, config.server.port);
    if (!failure) throw err;
    closer.uninstall(); // its exit handler would end the process with 0
    await app.close();
    await container.close();
    throw failure;
  }
  if (config.workers.inProcess) container.startWorkers();
}

startIfEntryPoint(import.meta.url, () => serve());
