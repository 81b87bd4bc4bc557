/**
 * The worker process (`sluice worker`, or `node dist/src/worker-main.js`), an entry point
 * beside src/main.ts: the same features as the server (src/composition/features.ts), no
 * HTTP. It runs the background workers (src/worker: the batch runner and the janitor)
 * against the configured database; start as many as the load needs, on any host that
 * reaches the database and the blob storage. SIGTERM/SIGINT drain: no new work, work in
 * hand finishes or is released, then the process exits.
 */
import closeWithGrace from 'close-with-grace';
import { describeConfig, loadConfigOrExit } from './config/load.js';
import { assemble } from './composition/features.js';
import { startIfEntryPoint } from './entry-point.js';

/** Longer than the runner's own drain (30 s), so leases are released before exit. */
const SHUTDOWN_GRACE_MS = 45_000;

export async function runWorker(): Promise<void> {
  const config = loadConfigOrExit();
  const assembly = await assemble(config);
  closeWithGrace({ delay: SHUTDOWN_GRACE_MS, logger: { error: (m: unknown) => assembly.logger.error(m) } }, async ({ signal, err }) => {
    if (err) assembly.logger.error({ err }, 'worker shutting down after error');
    else assembly.logger.info({ signal }, 'worker draining');
    await assembly.close();
  });
  assembly.startWorkers();
  // No `listen`: a worker serves no HTTP, and saying it listens would send people looking for it.
  const { listen: _listen, ...described } = describeConfig(config);
  assembly.logger.info({ config: described, workers: assembly.workers.map((w) => w.name) }, 'sluice worker started');
  for (const notice of config.modelNotices) assembly.logger.info(notice);
}

startIfEntryPoint(import.meta.url, runWorker);
