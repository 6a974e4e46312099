import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'bench/results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
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
  // The layers of DESIGN.md: dependencies point down only.
  layer('src/core/**/*.ts', ['../*']),
  layer('src/sms/**/*.ts', ['../*', '!../core'], true),
  layer('src/config/**/*.ts', ['../*', '!../core']),
  layer('src/observability/**/*.ts', ['../*', '!../core']),
  layer('src/smpp/**/*.ts', ['../*', '!../core', '!../sms']),
  layer('src/store/**/*.ts', ['../*', '!../core', '!../sms']),
  layer('src/dispatch/**/*.ts', ['../*', '!../core', '!../sms', '!../smpp', '!../store', '!../config', '!../observability']),
  layer('src/events/**/*.ts', ['../*', '!../core', '!../sms', '!../smpp', '!../store', '!../config', '!../observability']),
  layer('src/simulator/**/*.ts', ['../*', '!../core', '!../sms', '!../smpp']),
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
 * A layer may import only the folders `forbidden` leaves out (gitignore-style patterns over
 * the import path); a pure layer also no Node I/O module.
 */
function layer(files, forbidden, pure = false) {
  const io = ['node:fs', 'node:fs/promises', 'node:net', 'node:tls', 'node:http', 'node:https', 'node:child_process', 'node:dgram'];
  return {
    files: [files],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{ group: forbidden.map((p) => (p.startsWith('!') ? `!${p.slice(1)}/**` : `${p}/**`)), message: 'DESIGN.md layers: this import points up or sideways.' }],
        ...(pure ? { paths: io.map((name) => ({ name, message: 'The domain is pure: no I/O.' })) } : {}),
      }],
    },
  };
}
