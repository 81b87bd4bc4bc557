/**
 * The import boundaries of docs/development.md are lint rules: a probe file placed in a
 * layer and importing across a boundary is reported by the same ESLint configuration that
 * `npm run lint` runs, and the imports each layer is allowed stay clean. The zones resolve
 * imports to files, so every probe imports a file that exists.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BOUNDARY_RULES = new Set(['import-x/no-restricted-paths', '@typescript-eslint/no-restricted-imports']);
let eslint: ESLint;

beforeAll(() => {
  eslint = new ESLint({ cwd: ROOT });
});

/** The boundary messages ESLint reports for `source` as if it were the file `file` (relative to the repository). */
async function boundaryMessages(file: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${source}\nexport const probe = used;\n`, { filePath: path.join(ROOT, file) });
  return result!.messages.filter((m) => m.ruleId !== null && BOUNDARY_RULES.has(m.ruleId)).map((m) => m.message);
}

const DOMAIN_ONLY = 'src/domain imports only from src/domain';
const SHARED_KERNEL = 'The shared kernel (src/domain/shared) imports nothing outside itself';
const ADAPTER_DOMAIN = 'Adapters import from the domain only ports (*.port.ts), record types (*.types.ts) and the shared kernel';
const CONFIG_DOMAIN = 'src/config imports from the domain only record types (*.types.ts) and the shared kernel';
const WIRE_DOMAIN = 'src/wire imports from the domain only record types (*.types.ts) and the shared kernel';
const CONFIG_LOADING = 'Only src/config, composition and the entry points load the configuration';
const CONSOLE = 'The console (console/src) imports only its own code';

describe('import boundaries', () => {
  it.each([
    // The domain: nothing outside src/domain, at any depth.
    ['src/domain/probe/probe.ts', "import { used } from '../../storage/db/repositories/files.repository.js';", DOMAIN_ONLY],
    ['src/domain/probe/probe.ts', "import { used } from '../../http/errors.js';", DOMAIN_ONLY],
    ['src/domain/probe/deeper/probe.ts', "import { used } from '../../../storage/blobs/s3.js';", DOMAIN_ONLY],
    ['src/domain/probe.ts', "import type { used } from '../inference/registry.js';", DOMAIN_ONLY],
    ['src/domain/probe/probe.ts', "import type { used } from '../../config/schema.js';", DOMAIN_ONLY],
    ['src/domain/probe/probe.ts', "import { used } from '../../adapters/jose/agent-tokens.js';", DOMAIN_ONLY],
    ['src/domain/probe/probe.ts', "import { used } from '../../composition/features.js';", DOMAIN_ONLY],
    // The shared kernel: nothing outside itself.
    ['src/domain/shared/probe.ts', "import { used } from '../files/files.types.js';", SHARED_KERNEL],
    ['src/domain/shared/classification/probe.ts', "import { used } from '../../models/inference-backend.port.js';", SHARED_KERNEL],
    ['src/domain/shared/probe.ts', "import { used } from '../../inference/token-counter.js';", DOMAIN_ONLY],
    // wire (the request bodies): the domain's record types and shared kernel, TypeBox and Ajv; no service, port or outer layer.
    ['src/wire/probe.ts', "import { used } from '../domain/completions/chat-runner.js';", WIRE_DOMAIN],
    ['src/wire/probe.ts', "import type { used } from '../domain/models/inference-backend.port.js';", WIRE_DOMAIN],
    ['src/wire/probe.ts', "import { used } from '../http/errors.js';", 'src/wire imports only from'],
    ['src/wire/probe.ts', "import type { used } from '../inference/registry.js';", 'src/wire imports only from'],
    ['src/wire/probe.ts', "import type { used } from '../config/schema.js';", 'src/wire imports only from'],
    ['src/domain/shared/probe.ts', "import type { used } from '../../wire/chat-completions.js';", SHARED_KERNEL],
    ['src/inference/backends/openai/probe.ts', "import type { used } from '../../../wire/chat-completions.js';", 'src/inference imports only from'],
    ['src/storage/probe.ts', "import { used } from '../wire/validate.js';", 'src/storage imports only from'],
    // http: no storage (a route module importing a repository), adapters, inference or composition.
    ['src/http/routes/v1/probe.ts', "import { used } from '../../../storage/db/repositories/files.repository.js';", 'src/http imports only from'],
    ['src/http/probe.ts', "import { used } from '../storage/db/database.js';", 'src/http imports only from'],
    ['src/http/probe.ts', "import type { used } from '../storage/rate-limit/rate-limiter.js';", 'src/http imports only from'],
    ['src/http/probe.ts', "import { used } from '../adapters/payments/x402-rail.js';", 'src/http imports only from'],
    ['src/http/probe.ts', "import type { used } from '../inference/registry.js';", 'src/http imports only from'],
    ['src/http/probe.ts', "import { used } from '../composition/outbox.js';", 'src/http imports only from'],
    ['src/http/probe.ts', "import { used } from '../config/load.js';", CONFIG_LOADING],
    // Adapters (inference, storage, adapters): domain ports, record types and the shared kernel; no other adapter.
    ['src/inference/decision/probe.ts', "import { used } from '../../domain/files/files.service.js';", ADAPTER_DOMAIN],
    ['src/inference/backends/openai/probe.ts', "import { used } from '../../../domain/decision/answers.js';", ADAPTER_DOMAIN],
    ['src/inference/probe.ts', "import { used } from '../storage/blobs/s3.js';", 'src/inference imports only from'],
    // An upstream protocol folder: no other protocol's folder, no in-process runtime.
    ['src/inference/upstream/protocols/openai/probe.ts', "import { used } from '../../../backends/onnx/index.js';", 'An upstream protocol folder imports no other protocol folder'],
    ['src/inference/classifier/probe.ts', "import { used } from '../../http/errors.js';", 'src/inference imports only from'],
    ['src/inference/probe.ts', "import { used } from '../config/schema.js';", 'config schema as types only'],
    ['src/storage/db/probe.ts', "import { used } from '../../domain/billing/billing.service.js';", ADAPTER_DOMAIN],
    ['src/storage/probe.ts', "import type { used } from '../inference/registry.js';", 'src/storage imports only from'],
    ['src/storage/probe.ts', "import { used } from '../config/load.js';", CONFIG_LOADING],
    ['src/adapters/payments/probe.ts', "import { used } from '../../domain/storefront/purchases.js';", ADAPTER_DOMAIN],
    ['src/adapters/probe.ts', "import { used } from '../storage/db/database.js';", 'src/adapters imports only from'],
    // config: the domain's record types and shared kernel, nothing of the outer layers.
    ['src/config/probe.ts', "import { used } from '../domain/files/files.service.js';", CONFIG_DOMAIN],
    ['src/config/probe.ts', "import type { used } from '../domain/files/blob-store.port.js';", CONFIG_DOMAIN],
    ['src/config/probe.ts', "import type { used } from '../inference/registry.js';", 'src/config imports only from'],
    // observability: the domain and config types; not the adapters it measures, not http.
    ['src/observability/probe.ts', "import type { used } from '../storage/rate-limit/rate-limiter.js';", 'src/observability imports only from'],
    ['src/observability/probe.ts', "import { used } from '../http/errors.js';", 'src/observability imports only from'],
    // worker: no http, engines, storage (it runs on the domain's store ports) or composition
    // (its entry point, src/worker-main.ts, lies outside the layer; a main.ts inside it is no exception).
    ['src/worker/probe.ts', "import { used } from '../http/errors.js';", 'src/worker imports only from'],
    ['src/worker/probe.ts', "import type { used } from '../storage/db/repositories/batches.repository.js';", 'src/worker imports only from'],
    ['src/worker/main.ts', "import { used } from '../composition/outbox.js';", 'src/worker imports only from'],
    ['src/worker/probe.ts', "import type { used } from '../inference/registry.js';", 'src/worker imports only from'],
    ['src/worker/probe.ts', "import { used } from '../composition/outbox.js';", 'src/worker imports only from'],
    ['src/worker/probe.ts', "import { used } from '../config/load.js';", CONFIG_LOADING],
    // composition: everything but the entry points.
    ['src/composition/probe.ts', "import { used } from '../cli/main.js';", 'src/composition imports only from'],
    ['src/composition/probe.ts', "import { used } from '../main.js';", 'src/composition imports only from'],
    // src (entry points included) imports no tests; the console imports nothing outside console/src.
    ['src/cli/probe.ts', "import { used } from '../../test/helpers/fake-upstream.js';", 'Production code (src) imports no tests'],
    ['console/src/lib/probe.ts', "import type { used } from '../../../src/http/errors.js';", CONSOLE],
    ['console/src/pages/probe.tsx', "import { used } from '../../../src/domain/shared/errors.js';", CONSOLE],
    ['console/src/probe.ts', "import { used } from '../vite.config.js';", CONSOLE],
  ])('%s: %s is refused', async (file, source, reason) => {
    const messages = await boundaryMessages(file, source);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain(reason);
  });

  it.each([
    ['src/domain/probe/probe.ts', "import { used } from '../shared/errors.js';"],
    ['src/domain/decision/probe.ts', "import { used } from '../completions/chat-runner.js';"],
    ['src/domain/probe/probe.ts', "import type { used } from '../models/model-resolver.port.js';"],
    ['src/domain/shared/probe.ts', "import { used } from './errors.js';"],
    ['src/domain/shared/probe.ts', "import { used } from 'node:crypto';"],
    ['src/domain/shared/classification/probe.ts', "import { used } from '../errors.js';"],
    ['src/wire/probe.ts', "import { used } from '../domain/shared/errors.js';"],
    ['src/wire/probe.ts', "import type { used } from '../domain/models/model-spec.types.js';"],
    ['src/wire/probe.ts', "import { used } from './wording.js';"],
    ['src/wire/probe.ts', "import { used } from '@sinclair/typebox';"],
    ['src/wire/probe.ts', "import { used } from 'ajv';"],
    ['src/domain/completions/probe.ts', "import type { used } from '../../wire/chat-completions.js';"],
    ['src/http/routes/v1/probe.ts', "import { used } from '../../../wire/validate.js';"],
    ['src/worker/probe.ts', "import { used } from '../wire/validate.js';"],
    ['src/http/routes/v1/probe.ts', "import { used } from '../../../domain/files/files.service.js';"],
    ['src/http/probe.ts', "import type { used } from '../domain/identity/rate-limiter.port.js';"],
    ['src/http/probe.ts', "import { used } from '../observability/metrics.js';"],
    ['src/http/probe.ts', "import type { used } from '../config/schema.js';"],
    ['src/inference/backends/openai/probe.ts', "import { used } from '../../../domain/decision/scorer.port.js';"],
    ['src/inference/backends/openai/probe.ts', "import type { used } from '../../../domain/models/model-spec.types.js';"],
    ['src/inference/backends/openai/probe.ts', "import { used } from '../../../domain/shared/errors.js';"],
    ['src/inference/classifier/probe.ts', "import { used } from '../../domain/shared/classification/label-sets.js';"],
    ['src/inference/backends/openai/probe.ts', "import type { used } from '../../../config/schema.js';"],
    ['src/inference/backends/openai/probe.ts', "import { used } from '../../registry.js';"],
    ['src/storage/db/probe.ts', "import type { used } from '../../domain/batches/batch-stores.port.js';"],
    ['src/adapters/payments/probe.ts', "import { used } from '../../domain/shared/storefront-errors.js';"],
    ['src/config/probe.ts', "import type { used } from '../domain/models/model-spec.types.js';"],
    ['src/config/probe.ts', "import { used } from '../domain/shared/money.js';"],
    ['src/observability/probe.ts', "import type { used } from '../domain/billing/billing.service.js';"],
    ['src/worker/probe.ts', "import type { used } from '../domain/batches/batch-stores.port.js';"],
    ['src/worker/probe.ts', "import { used } from '../observability/batch-tracing.js';"],
    ['src/worker-main.ts', "import { used } from './composition/outbox.js';"],
    ['src/composition/probe.ts', "import { used } from '../storage/db/repositories/files.repository.js';"],
    ['src/composition/probe.ts', "import { used } from '../http/errors.js';"],
    ['src/composition/probe.ts', "import { used } from '../config/load.js';"],
    ['src/cli/probe.ts', "import { used } from '../composition/outbox.js';"],
    ['src/main.ts', "import { used } from './composition/outbox.js';"],
    ['console/src/lib/probe.ts', "import type { used } from './types.js';"],
    ['console/src/pages/probe.tsx', "import { used } from 'react';"],
  ])('%s: %s is allowed', async (file, source) => {
    expect(await boundaryMessages(file, source)).toEqual([]);
  });
});
