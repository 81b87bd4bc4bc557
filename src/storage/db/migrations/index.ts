/**
 * Versioned migrations, in order. Add a file `NNNN-<what>.ts` exporting up/down and
 * list it here; names sort, and a name is never reused or edited after release.
 */
import type { Migration } from 'kysely';
import * as m0001 from './0001-foundation.js';
import * as m0002 from './0002-files-batches.js';
import * as m0003 from './0003-batch-retention.js';
import * as m0004 from './0004-usage-clustered.js';
import * as m0005 from './0005-batch-trace-parent.js';
import * as m0006 from './0006-payer.js';
import * as m0007 from './0007-outbox.js';
import * as m0008 from './0008-storefront.js';
import * as m0009 from './0009-console.js';
import * as m0010 from './0010-outbox-keys.js';
import * as m0011 from './0011-usage-deployment.js';
import * as m0012 from './0012-batch-usage.js';
import * as m0013 from './0013-responses.js';
import * as m0014 from './0014-usage-session.js';
import * as m0015 from './0015-usage-cached-tokens.js';
import * as m0016 from './0016-key-policy.js';
import * as m0017 from './0017-people-audit.js';
import * as m0018 from './0018-usage-tags.js';
import * as m0019 from './0019-request-log.js';
import * as m0020 from './0020-usage-key-spend.js';
import * as m0021 from './0021-key-owner.js';
import * as m0022 from './0022-usage-rollups.js';
import * as m0023 from './0023-project-deletion.js';
import * as m0025 from './0025-people-mapped-grants.js';
import * as m0026 from './0026-request-log-lean-indexes.js';

export const MIGRATIONS: Record<string, Migration> = {
  '0001-foundation': m0001,
  '0002-files-batches': m0002,
  '0003-batch-retention': m0003,
  '0004-usage-clustered': m0004,
  '0005-batch-trace-parent': m0005,
  '0006-payer': m0006,
  '0007-outbox': m0007,
  '0008-storefront': m0008,
  '0009-console': m0009,
  '0010-outbox-keys': m0010,
  '0011-usage-deployment': m0011,
  '0012-batch-usage': m0012,
  '0013-responses': m0013,
  '0014-usage-session': m0014,
  '0015-usage-cached-tokens': m0015,
  '0016-key-policy': m0016,
  '0017-people-audit': m0017,
  '0018-usage-tags': m0018,
  '0019-request-log': m0019,
  '0020-usage-key-spend': m0020,
  '0021-key-owner': m0021,
  '0022-usage-rollups': m0022,
  '0023-project-deletion': m0023,
  '0025-people-mapped-grants': m0025,
  '0026-request-log-lean-indexes': m0026,
};
