import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The folders of src/, each a layer of DESIGN.md. */
const LAYERS = ['core', 'sms', 'config', 'observability', 'smpp', 'amqp', 'store', 'simulator', 'dispatch', 'events', 'api', 'ingress', 'cli'];

/** The product's public modules (under src/, without .ts): all that bench/ may import of it. */
const PUBLIC = ['core/index', 'config/index', 'smpp/index', 'simulator/index', 'store/index', 'store/sqlite/index', 'store/postgres/index',
  'dispatch/index', 'events/index', 'ingress/amqp/index', 'cli/node-flags'];

/** The bench imports the product; the product never imports the bench. */
const NOT_BENCH = { regex: '^(\\.\\./)+bench/', message: 'The product does not import the bench.' };

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'bench/results/', 'bench/build/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // Type-aware rules read the TypeScript program (tsconfig.json): a promise nobody awaits, a
  // promise where a callback's void was expected, a switch that misses a member of its union.
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
  },
  ...tseslint.configs.recommendedTypeChecked.map((config) => ({ ...config, files: ['src/**/*.ts', 'bench/**/*.ts'], ignores: ['bench/test/**'] })),
  {
    // Tests (test/, bench/test/) get the promise and switch rules, not the `no-unsafe-*` family:
    // they read parsed JSON (`res.json()`, `JSON.parse`) as `any` on purpose and assert on it.
    files: ['src/**/*.ts', 'bench/**/*.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // `Promise.all` over "a promise or nothing" (a lane with no claim under way) is meant.
      '@typescript-eslint/await-thenable': ['error', { allowMixedPromiseArrays: true }],
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      // An `async` function without `await` is how a synchronous implementation meets a
      // Promise-returning interface (a Fastify handler, `Store.close`) and turns a throw into a
      // rejection; dropping `async` would change that.
      '@typescript-eslint/require-await': 'off',
      // A caught `unknown` is passed on as it came; the receiver (toWireError) makes sense of it.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
    },
  },
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
      // Time comes from the injected Clock (src/core/clock.ts) so tests can drive it.
      'no-restricted-globals': ['error',
        { name: 'setTimeout', message: 'Use the injected Clock.' },
        { name: 'setInterval', message: 'Use the injected Clock.' },
        { name: 'performance', message: 'Use the injected Clock.' },
      ],
      'no-restricted-properties': ['error',
        { object: 'Date', property: 'now', message: 'Use the injected Clock.' },
      ],
      'no-restricted-syntax': ['error',
        { selector: 'TSEnumDeclaration', message: 'Use an as-const object and a string union.' },
      ],
    },
  },
  {
    // A module past ~400 lines is two modules (STYLE.md). Lines are counted as `wc -l` counts
    // them, comments and blank lines included: a long explanation is still a long file to read.
    files: ['src/**/*.ts'],
    rules: { 'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }] },
  },
  // The layers of DESIGN.md: dependencies point down only (`src/simulator` may use the codec files of smpp).
  layer('core', []),
  layer('sms', ['core'], true),
  // config checks values by the domain's pure rules (a sender ID): the domain is a floor below it.
  layer('config', ['core', 'sms']),
  layer('observability', ['core']),
  layer('smpp', ['core', 'sms']),
  // The broker connection, kept up: the queue ingress and the event publisher each hold one.
  layer('amqp', ['core']),
  layer('store', ['core', 'sms']),
  layer('simulator', ['core', 'sms', 'smpp']),
  layer('dispatch', ['core', 'sms', 'smpp', 'store', 'config', 'observability']),
  layer('events', ['core', 'sms', 'smpp', 'store', 'config', 'observability', 'amqp']),
  // The contract both ingresses share (validation, errors, clients, the send request dispatch
  // takes): pure, so no transport (fastify, amqplib) reaches it.
  layer('api', ['core', 'sms', 'dispatch'], true),
  layer('ingress', ['core', 'sms', 'smpp', 'store', 'config', 'observability', 'dispatch', 'events', 'amqp', 'api']),
  { files: ['src/main.ts', 'src/cli/**/*.ts'], rules: { 'no-restricted-imports': ['error', { patterns: [NOT_BENCH] }] } },
  ...[1, 2, 3].map(benchImports),
  {
    files: ['src/core/clock.ts', 'test/**/*.ts', 'bench/**/*.ts', 'src/cli/**/*.ts'],
    rules: { 'no-restricted-globals': 'off', 'no-restricted-properties': 'off' },
  },
  {
    files: ['src/cli/**/*.ts', 'src/main.ts', 'bench/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);

/**
 * Files of bench/ `depth` folders below the root may import of src/ only its public modules. The
 * depth tells the product's src/ (`../../src/` from bench/test/) from the bench's own (`../src/`).
 */
function benchImports(depth) {
  return {
    files: [`bench/${'*/'.repeat(depth - 1)}*.ts`],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { regex: `^${'\\.\\./'.repeat(depth)}src/(?!(${PUBLIC.join('|')})\\.js$)`, message: `The bench imports the product only through its public modules: ${PUBLIC.map((m) => `src/${m}.ts`).join(', ')}.` },
          { regex: '^(\\.\\./)+dist/', message: 'The bench imports the product from its sources (src/), through its public modules.' },
        ],
      }],
    },
  };
}

/**
 * Files in src/<name>/ (at any depth) may import the layers in `allowed` and their own folder,
 * nothing else of src/; a pure layer also no I/O module (Node's, a server's, a broker's or a
 * database's client). Matches the folder name as a path segment of the import
 * ('../../store/store.js'), so sub-folders need no rule of their own.
 */
function layer(name, allowed, pure = false) {
  const io = ['node:fs', 'node:fs/promises', 'node:net', 'node:tls', 'node:http', 'node:https', 'node:child_process', 'node:dgram',
    'fastify', '@fastify/multipart', 'amqplib', 'pg', 'better-sqlite3', 'undici'];
  const forbidden = LAYERS.filter((l) => l !== name && !allowed.includes(l));
  return {
    files: [`src/${name}/**/*.ts`],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{ regex: `^\\.\\.?/(\\.\\./)*(${forbidden.join('|')})/`, message: `DESIGN.md layers: src/${name} may import only ${allowed.join(', ') || 'nothing else of src'}.` }, { regex: '^(\\.\\./)+main\\.js$', message: 'DESIGN.md layers: nothing imports the entry point.' }, NOT_BENCH],
        ...(pure ? { paths: io.map((io) => ({ name: io, message: `src/${name} is pure: no I/O.` })) } : {}),
      }],
    },
  };
}
