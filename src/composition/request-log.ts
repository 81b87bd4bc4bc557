/**
 * The request log: one record per call on every route and scope, written off the hot path
 * in batches (the writer is bound into the core's routes), read by project on /v1 and
 * across projects on the admin API, exported as NDJSON, and swept by the janitor after
 * each project's retention. Its gap (entries dropped while the store was slow or down) is
 * counted in `sluice_request_log_dropped_total` and shown on /readyz.
 *
 * Deleting a project (`DELETE /admin/v1/projects/:id`, `sluice projects delete`) is composed
 * here: it deletes the project's log with everything else it owns, after this replica's
 * queued entries are written.
 */
import { Counter } from 'prom-client';
import { RequestLogWriter } from '../domain/request-log/log-writer.js';
import { RequestLogService } from '../domain/request-log/request-log.service.js';
import { bindRoutes } from '../http/route-module.js';
import { registerAdminRequestRoutes } from '../http/routes/admin/requests.js';
import { registerRequestRoutes } from '../http/routes/v1/requests.js';
import { RequestLogRepository } from '../storage/db/repositories/request-log.repository.js';
import { ProjectDeletion } from '../domain/projects/project-deletion.js';
import { ProjectDeletionRepository } from '../storage/db/repositories/project-deletion.repository.js';
import { registerProjectDeletion } from '../http/routes/admin/project-deletion.js';
import type { CoreBilling, CoreInference, CoreInfrastructure } from './core.js';
import type { Feature, Peers } from './feature.js';
import type { BatchesParts } from './batches.js';
import type { Config } from '../config/schema.js';
import { gatewayProjectId } from './gateway.js';
import { SellerDirectory, storefrontProjectId } from '../domain/storefront/sellers.js';

export interface RequestLogParts {
  writer: RequestLogWriter;
  reader: RequestLogService;
  /** Deletes a project, its log included. */
  deletion: ProjectDeletion;
}

/** How often a replica reads the projects' logging settings again (another replica may have changed them). */
const SETTINGS_REFRESH_MS = 30_000;
/** Entries one sweep deletes at most (the janitor runs every minute). */
const SWEEP_LIMIT = 5_000;

export async function createRequestLogFeature(
  core: CoreInfrastructure & CoreBilling & CoreInference,
  earlier: Peers<{ batches: BatchesParts }>,
): Promise<Feature<RequestLogParts>> {
  const { config, database, blobs, clock, metrics } = core;
  const logger = core.logger.child({ component: 'request-log' });
  const store = new RequestLogRepository(database);
  const dropped = new Counter({
    name: 'sluice_request_log_dropped_total',
    help: 'Request log entries dropped: the queue was full or the store refused the write (the call itself was served)',
    registers: [metrics.registry],
  });
  const settings = config.request_log;
  const writer = new RequestLogWriter({
    store,
    blobs,
    clock,
    settings: { ...settings, defaults: settings.defaults },
    dropped: (count) => dropped.inc(count),
    failed: (err) => logger.warn({ err }, 'request log entries dropped: the store refused the write'),
  });
  const reader = new RequestLogService(store, blobs);
  const refresh = async () => {
    try {
      writer.useSettings(await store.settings());
    } catch (err) {
      logger.warn({ err }, 'could not read the projects logging settings');
    }
  };
  await refresh();
  const refresher = setInterval(() => void refresh(), SETTINGS_REFRESH_MS);
  refresher.unref();
  writer.start();
  core.requestLog.bind(writer);
  earlier.batches.services.janitor.addSweep({
    name: 'request_log',
    sweep: async () => {
      const { deleted, blobKeys } = await store.sweep(clock.nowMs(), settings.defaults.retentionDays, SWEEP_LIMIT);
      for (const key of blobKeys) await blobs.delete(key);
      return deleted;
    },
  });
  // An unknown project is not found (getProject throws), before its settings are read or written.
  const settingsOf = async (projectId: string) => {
    await core.projects.getProject(projectId);
    return writer.settingsOf(projectId);
  };
  const saveSettings = async (projectId: string, next: Parameters<RequestLogService['saveSettings']>[1]) => {
    await reader.saveSettings(projectId, next);
    await refresh();
  };
  const deletion = new ProjectDeletion({
    store: new ProjectDeletionRepository(database),
    getProject: (projectId) => core.projects.getProject(projectId),
    forgetKey: (keyHash) => core.authenticator.forget(keyHash),
    flushLog: () => writer.flush(),
    blobs,
    clock,
    audit: core.audit,
    configuredUse: configuredProjects(config),
    blobFailed: (key, err) => logger.warn({ err, blob_key: key }, 'a deleted project\'s request log body blob could not be deleted'),
  });
  return {
    services: { writer, reader, deletion },
    routes: {
      api: [bindRoutes(registerRequestRoutes, { reader })],
      admin: [bindRoutes(registerAdminRequestRoutes, { reader, settingsOf, saveSettings }), bindRoutes(registerProjectDeletion, { deletion })],
    },
    notes(): Record<string, string> {
      const { dropped, lastDropAtMs, queued } = writer.gap();
      if (dropped === 0) return {};
      return { request_log: `${dropped} entries dropped (last at ${new Date(lastDropAtMs!).toISOString()}); ${queued} waiting to be written` };
    },
    async close() {
      clearInterval(refresher);
      await writer.close();
    },
  };
}

/** The projects the configuration names (the gateway's tenant, the storefront sellers'), and what for: they are not deleted. */
function configuredProjects(config: Readonly<Config>): (projectId: string) => string | null {
  const uses = new Map<string, string>();
  if (config.gateway.signingSecrets.size > 0) uses.set(gatewayProjectId(config.gateway.intermediaryId), "the gateway's tenant");
  for (const seller of config.storefront ? new SellerDirectory(config.storefront).sellers : []) uses.set(storefrontProjectId(seller.id), `the project of the storefront seller ${seller.id}`);
  return (projectId) => uses.get(projectId) ?? null;
}
