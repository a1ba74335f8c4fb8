// ESLint for the lab extension and the panel (`npm run eslint:check`, part of `make lint`):
// typescript-eslint's recommended rules over src/ and test/, the JavaScript ones over
// scripts/. Formatting is prettier's job, not ESLint's.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    // lib*/ are tsc's output; protocol.ts and wire.ts are generated (scripts/), and their
    // tests fail when they differ from what the generators give.
    ignores: [
      'lib/',
      'lib-test/',
      'node_modules/',
      'src/protocol.ts',
      'src/panel/wire.ts'
    ]
  },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    rules: {
      // `export namespace CommandIDs {…}` is JupyterLab's idiom for ids (tokens.ts)
      '@typescript-eslint/no-namespace': 'off'
    }
  },
  {
    // The tests load the CommonJS generators in scripts/ and fake the DOM and anywidget's
    // model, whose loose shapes `any` stands for.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-require-imports': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-this-alias': 'off'
    }
  },
  {
    files: ['scripts/**/*.js'],
    extends: [js.configs.recommended],
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        require: 'readonly',
        module: 'writable',
        __dirname: 'readonly',
        process: 'readonly',
        console: 'readonly'
      }
    }
  },
  {
    files: ['eslint.config.mjs'],
    extends: [js.configs.recommended]
  }
);
