import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/*
 * Import boundaries (docs/development.md). ESLint's no-restricted-imports matches a specifier
 * as written, so each rule is spelled once per folder depth: `../` times the depth of a
 * file below src/ reaches src/, and the pattern names what lies there. A file gets the
 * rule of the deepest boundary folder it is in (later blocks override earlier ones).
 */
const MAX_DEPTH = 6;
const SRC = (up) => `^(?:\\.\\./){${up}}`;
const OUTER_LAYERS = (up) => [
  {
    regex: `${SRC(up)}(?:http|storage|worker|cli|observability|composition)(?:/|$)`,
    message: 'Crosses a layer boundary (docs/development.md, Import boundaries): depend on a port in src/domain instead.',
  },
  { regex: `${SRC(up)}(?:container|main|entry-point)\\.js$`, message: 'Only entry points import the composition root.' },
];
const CONFIG_TYPES = (up) => [
  { regex: `${SRC(up)}config/(?!schema\\.js$)`, message: 'Only src/config reads the environment; take values as arguments.' },
  { regex: `${SRC(up)}config/schema\\.js$`, allowTypeImports: true, message: 'Import the config schema as types only.' },
];
const BOUNDARIES = {
  // The domain: plain TypeScript. From src/inference only the backend port, the catalog,
  // the registry (as a type) and the classifier packs' label sets and calibration maths.
  'src/domain': (up) => [
    ...OUTER_LAYERS(up),
    ...CONFIG_TYPES(up),
    {
      regex: `${SRC(up)}inference/(?!(?:backend|catalog|registry)\\.js$|classifier/)`,
      message: 'The domain uses the inference port (backend.ts), not its adapters.',
    },
    { regex: `${SRC(up)}inference/registry\\.js$`, allowTypeImports: true, message: 'The domain takes the registry as a type only.' },
  ],
  // The shared kernel imports nothing of the project outside itself.
  'src/domain/shared': (_up, below) => [
    { regex: `^(?:\\.\\./){${below + 1}}`, message: 'The shared kernel (src/domain/shared) imports nothing outside itself.' },
  ],
  // http reaches data only through domain services.
  'src/http': (up) => [
    { regex: `${SRC(up)}storage/db/`, message: 'src/http imports no repository or database code: call a domain service.' },
  ],
  // Inference adapters: domain ports (*.port.ts) and the shared kernel only.
  'src/inference': (up) => [
    ...OUTER_LAYERS(up),
    ...CONFIG_TYPES(up),
    {
      regex: `${SRC(up)}domain/(?!shared/)(?!.*\\.port\\.js$)`,
      message: 'Inference adapters import only domain ports (*.port.ts) and the shared kernel (domain/shared).',
    },
  ],
};
const boundaryBlocks = Object.entries(BOUNDARIES).flatMap(([dir, patterns]) =>
  Array.from({ length: MAX_DEPTH }, (_, below) => ({
    files: [`${dir}/${'*/'.repeat(below)}*.ts`],
    rules: { 'no-restricted-imports': ['error', { patterns: patterns(dir.split('/').length - 1 + below, below) }] },
  })),
);

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
  ...boundaryBlocks,
);
