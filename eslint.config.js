import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';

/*
 * Import boundaries (docs/development.md) as path zones: import-x/no-restricted-paths resolves
 * every import to its file and refuses it when the file lies in a zone's `from` while the
 * importer lies in its `target`. Each layer lists the layers it may import; `from` is the
 * complement (`src/!(a|b)/**`). Narrower zones then say which files of an allowed layer
 * are open to it: ports and record types of the domain, the schema of the config.
 */
const LAYER_IMPORTS = {
  'src/wire': ['wire', 'domain'],
  'src/domain': ['domain', 'wire'],
  'src/config': ['config', 'domain'],
  'src/inference': ['inference', 'domain', 'config'],
  'src/storage': ['storage', 'domain', 'config'],
  'src/adapters': ['adapters', 'domain', 'config'],
  'src/observability': ['observability', 'domain', 'config'],
  'src/http': ['http', 'domain', 'wire', 'observability', 'config'],
  'src/worker': ['worker', 'domain', 'wire', 'observability', 'config'],
  'src/composition': ['composition', 'domain', 'wire', 'config', 'inference', 'storage', 'adapters', 'observability', 'http', 'worker'],
};

/*
 * Entry points (src/main.ts, src/worker-main.ts, src/cli, and their start-up helpers
 * src/entry-point.ts and src/listen-errors.ts) belong to no layer: they may import anything
 * under src/, and no layer imports them. Composition is imported by entry points only (no
 * other layer lists it).
 */
// Adapters: they implement the domain's ports and read the config's types.
const ADAPTERS = ['src/inference/**', 'src/storage/**', 'src/adapters/**'];

const layerZone = ([dir, layers]) => ({
  target: `${dir}/**`,
  from: [`src/!(${layers.join('|')})/**`, 'src/*.ts'],
  message: `${dir} imports only from ${layers.map((l) => `src/${l}`).join(', ')} (docs/development.md, Import boundaries).`,
});

// One folder per upstream protocol (src/inference/upstream/protocols/<name>): what two protocols share lives in upstream/.
const PROTOCOLS_DIR = 'src/inference/upstream/protocols';
const protocolZone = (name) => ({
  target: `${PROTOCOLS_DIR}/${name}/**`,
  from: [`${PROTOCOLS_DIR}/!(${name})/**`, 'src/inference/backends/**'],
  message: 'An upstream protocol folder imports no other protocol folder and no in-process runtime; what protocols share lives in src/inference/upstream.',
});
const PROTOCOL_ZONES = readdirSync(`${import.meta.dirname}/${PROTOCOLS_DIR}`, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => protocolZone(entry.name));

const ZONES = [
  ...Object.entries(LAYER_IMPORTS).map(layerZone),
  ...PROTOCOL_ZONES,
  {
    target: 'src/domain/shared/**',
    from: ['src/domain/!(shared)/**', 'src/wire/**'],
    message: 'The shared kernel (src/domain/shared) imports nothing outside itself.',
  },
  {
    // The request bodies' one definition: the domain's services take its types, so it cannot take theirs.
    target: 'src/wire/**',
    from: ['src/domain/!(shared)/**/!(*.types).ts', 'src/domain/!(*.types).ts'],
    message: 'src/wire imports from the domain only record types (*.types.ts) and the shared kernel (domain/shared).',
  },
  {
    target: 'src/config/**',
    from: ['src/domain/!(shared)/**/!(*.types).ts', 'src/domain/!(*.types).ts'],
    message: 'src/config imports from the domain only record types (*.types.ts) and the shared kernel (domain/shared).',
  },
  {
    target: [...ADAPTERS, 'src/worker/**', 'src/http/**', 'src/observability/**'],
    from: 'src/config/!(schema).ts',
    message: 'Only src/config, composition and the entry points load the configuration; other layers take its values, typed by config/schema.ts.',
  },
  {
    target: ADAPTERS,
    from: ['src/domain/!(shared)/**/!(*.port|*.types).ts', 'src/domain/!(*.port|*.types).ts'],
    message: 'Adapters import from the domain only ports (*.port.ts), record types (*.types.ts) and the shared kernel (domain/shared).',
  },
  {
    target: 'src/**',
    from: ['test/**', 'bench/**', 'console/**'],
    message: 'Production code (src) imports no tests, benchmarks or console code.',
  },
  {
    target: 'console/src/**',
    from: ['!(console|node_modules)/**', 'console/!(src)/**', 'console/*.*', '*.*'],
    message: 'The console (console/src) imports only its own code, wire types included (console/src/lib/types.ts), and packages.',
  },
];

// Where the config's schema may be imported at all, only its types: its values are the loader's.
const SCHEMA_USERS = ['src/inference/**', 'src/storage/**', 'src/adapters/**', 'src/observability/**', 'src/http/**', 'src/worker/**'];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'coverage/**', '.bench-tmp/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['error', 'warn'] }],
    },
  },
  {
    files: ['src/cli/**', 'bench/**', 'test/**'],
    rules: { 'no-console': 'off' },
  },
  {
    // Tests read wire JSON loosely on purpose; assertions check the shapes.
    files: ['test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['src/**/*.ts', 'console/src/**/*.{ts,tsx}'],
    plugins: { 'import-x': importX },
    settings: {
      // Sources import each other as `.js` (NodeNext); resolve that to the `.ts`/`.tsx` file.
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.tsx', '.js', '.json'], extensionAlias: { '.js': ['.ts', '.tsx', '.js'] } })],
    },
    rules: { 'import-x/no-restricted-paths': ['error', { basePath: import.meta.dirname, zones: ZONES }] },
  },
  {
    files: SCHEMA_USERS,
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/config/schema.js'], allowTypeImports: true, message: 'Import the config schema as types only.' }] },
      ],
    },
  },
);
