/**
 * The import boundaries of docs/development.md are lint rules: a probe file placed in a
 * layer and importing across a boundary is reported by the same ESLint configuration that
 * `npm run lint` runs, and the imports each layer is allowed stay clean.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let eslint: ESLint;

beforeAll(() => {
  eslint = new ESLint({ cwd: ROOT });
});

/** The boundary messages ESLint reports for `source` as if it were the file `file` (relative to the repository). */
async function boundaryMessages(file: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${source}\nexport const probe = used;\n`, { filePath: path.join(ROOT, file) });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('import boundaries', () => {
  it.each([
    ['src/domain/probe/probe.ts', "import { used } from '../../http/app.js';", 'Crosses a layer boundary'],
    ['src/domain/probe/probe.ts', "import { used } from '../../storage/db/repositories/files.repository.js';", 'Crosses a layer boundary'],
    ['src/domain/probe/deeper/probe.ts', "import { used } from '../../../storage/blobs/s3.js';", 'Crosses a layer boundary'],
    ['src/domain/probe.ts', "import { used } from '../http/errors.js';", 'Crosses a layer boundary'],
    ['src/domain/probe/probe.ts', "import { used } from '../../inference/backends/openai/index.js';", 'not its adapters'],
    ['src/domain/probe/probe.ts', "import { used } from '../../inference/token-counter.js';", 'not its adapters'],
    ['src/domain/probe/probe.ts', "import { used } from '../../inference/registry.js';", 'registry as a type only'],
    ['src/domain/probe/probe.ts', "import { used } from '../../config/load.js';", 'Only src/config reads the environment'],
    ['src/domain/probe/probe.ts', "import { used } from '../../config/schema.js';", 'config schema as types only'],
    ['src/domain/probe/probe.ts', "import { used } from '../../container.js';", 'composition root'],
    ['src/domain/shared/probe.ts', "import { used } from '../files/files.types.js';", 'shared kernel'],
    ['src/domain/shared/probe.ts', "import { used } from '../../inference/backend.js';", 'shared kernel'],
    ['src/http/routes/v1/probe.ts', "import { used } from '../../../storage/db/repositories/files.repository.js';", 'imports no repository'],
    ['src/http/probe.ts', "import { used } from '../storage/db/database.js';", 'imports no repository'],
    ['src/inference/backends/openai/probe.ts', "import { used } from '../../../domain/decision/answers.js';", 'only domain ports'],
    ['src/inference/decision/probe.ts', "import { used } from '../../domain/files/files.service.js';", 'only domain ports'],
    ['src/inference/probe.ts', "import { used } from '../storage/blobs/s3.js';", 'Crosses a layer boundary'],
    ['src/inference/classifier/probe.ts', "import { used } from '../../http/errors.js';", 'Crosses a layer boundary'],
  ])('%s: %s is refused', async (file, source, reason) => {
    const messages = await boundaryMessages(file, source);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain(reason);
  });

  it.each([
    ['src/domain/probe/probe.ts', "import { used } from '../shared/errors.js';"],
    ['src/domain/probe/probe.ts', "import type { used } from '../../config/schema.js';"],
    ['src/domain/probe/probe.ts', "import type { used } from '../../inference/registry.js';"],
    ['src/domain/probe/probe.ts', "import { used } from '../../inference/backend.js';"],
    ['src/domain/probe/probe.ts', "import { used } from '../../inference/classifier/label-sets.js';"],
    // domain/decision/inference is under the domain, not src/inference.
    ['src/domain/decision/probe.ts', "import { used } from '../inference/backends/none.js';"],
    ['src/domain/shared/probe.ts', "import { used } from './errors.js';"],
    ['src/domain/shared/probe.ts', "import { used } from 'node:crypto';"],
    ['src/http/routes/v1/probe.ts', "import { used } from '../../../domain/files/files.service.js';"],
    ['src/http/probe.ts', "import type { used } from '../storage/rate-limit/rate-limiter.js';"],
    ['src/inference/backends/openai/probe.ts', "import { used } from '../../../domain/decision/scorer.port.js';"],
    ['src/inference/backends/openai/probe.ts', "import { used } from '../../../domain/shared/errors.js';"],
    ['src/inference/backends/openai/probe.ts', "import type { used } from '../../../config/schema.js';"],
    ['src/inference/backends/openai/probe.ts', "import { used } from '../../backend.js';"],
    ['src/worker/probe.ts', "import type { used } from '../storage/db/repositories/batches.repository.js';"],
  ])('%s: %s is allowed', async (file, source) => {
    expect(await boundaryMessages(file, source)).toEqual([]);
  });
});
