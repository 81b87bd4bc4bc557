/** `npm start`: load config, build the container and the app, listen, and shut down gracefully. */
import closeWithGrace from 'close-with-grace';
import { ConfigError, describeConfig, loadConfig } from './config/load.js';
import { createContainer } from './container.js';
import { buildApp } from './http/app.js';

export async function serve(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
  const container = await createContainer(config);
  const app = await buildApp(container);
  container.logger.info({ config: describeConfig(config) }, 'starting sluice');

  closeWithGrace({ delay: 30_000, logger: { error: (m: unknown) => container.logger.error(m) } }, async ({ signal, err }) => {
    if (err) container.logger.error({ err }, 'shutting down after error');
    else container.logger.info({ signal }, 'shutting down');
    await app.close(); // stops accepting, waits for in-flight requests
    await container.close(); // stops workers, closes the database
  });

  await app.listen({ host: config.server.host, port: config.server.port });
  if (config.workers.inProcess) container.startWorkers();
}

const invokedDirectly = process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'));
if (invokedDirectly) {
  serve().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
