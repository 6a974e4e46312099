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
  {
    files: ['src/core/clock.ts', 'test/**/*.ts', 'bench/**/*.ts', 'src/cli/**/*.ts'],
    rules: { 'no-restricted-globals': 'off', 'no-restricted-properties': 'off' },
  },
  {
    files: ['src/cli/**/*.ts', 'src/main.ts', 'bench/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);
