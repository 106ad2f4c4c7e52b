// `npm run lint`: typescript-eslint's type-checked rules over the project's TypeScript.
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['node_modules/**', '.data/**', 'bench/results/**', 'console/dist/**', 'eslint.config.js', '.dependency-cruiser.cjs'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // Route handlers, queue and job callbacks are async by contract even when they await nothing.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Decimals print exactly; they are the money and quantity type.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allow: [{ from: 'package', name: 'Decimal', package: 'decimal.js' }] }],
      // Driver results (pg rows, ClickHouse JSON) are given their row type where they are read.
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
    },
  },
  {
    // Tests and benches read untyped JSON bodies, and node:test's test() promises are awaited by the runner.
    files: ['**/*.test.ts', '**/test-helpers.ts', '**/test-kit.ts', 'test/**', 'bench/**'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-floating-promises': 'off',
      '@typescript-eslint/no-base-to-string': 'off',
    },
  },
  {
    // A function reads as a short list of named steps, each a function with one job (STYLE.md).
    files: ['**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }] },
  },
  {
    // Tests are scenarios read top to bottom (a test's body is its story), and benches are
    // programs that set up, load and print in one run: cutting them in pieces hides the order.
    files: ['**/*.test.ts', 'test/**', 'bench/**'],
    rules: { 'max-lines-per-function': 'off' },
  },
  {
    // Flat tables and catalogues: one entry per line (every setting; response schemas), no logic
    // to name; their length is the number of entries.
    files: ['platform/settings.ts', '**/response-schemas.ts'],
    rules: { 'max-lines-per-function': 'off' },
  },
  {
    // A route plugin is a flat list of routes, each a path, its schema and a short handler that
    // calls a use case: it grows with the API, not with logic (and the SDK work reworks them).
    files: ['billing-api/**/routes.ts'],
    rules: { 'max-lines-per-function': 'off' },
  },
  // Plain JavaScript (the worker threads' entry, which registers tsx): no type information.
  { files: ['**/*.mjs'], ...tseslint.configs.disableTypeChecked },
)
