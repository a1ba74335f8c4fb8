/**
 * Bundles the panel (src/panel/widget.ts and what it imports) into one self-contained ES
 * module, ../jupyter_agent/jupyter/panel/static/panel.js, the anywidget front end panel.py loads
 * (`npm run build:panel`, part of every build: `build:lib`, `build:prod`,
 * `install:extension`). The file is a build artefact, not tracked: the sdist and the wheel
 * carry it (pyproject.toml's `artifacts`); test/panel-build.test.ts bundles again and fails
 * when it is missing or stale.
 *
 * The output is deterministic: no minification, no source map, no timestamp; esbuild is
 * pinned in package.json.
 */
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const ENTRY = path.join(ROOT, 'src', 'panel', 'widget.ts');
const TARGET = path.resolve(
  ROOT,
  '../jupyter_agent/jupyter/panel/static/panel.js'
);

const BANNER =
  '// The jupyter_agent panel, built from js/src/panel/ by js/scripts/panel.js\n' +
  '// (`npm run build:panel`). Do not edit: js/test/panel-build.test.ts fails when this\n' +
  '// file is not what the sources give.';

/** The bundle's text. */
async function bundle() {
  const esbuild = require('esbuild');
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: [path.relative(ROOT, ENTRY)],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2020',
    charset: 'utf8',
    legalComments: 'none',
    banner: { js: BANNER },
    write: false,
    logLevel: 'silent'
  });
  return result.outputFiles[0].text;
}

module.exports = { ENTRY, TARGET, bundle };

if (require.main === module) {
  bundle().then(
    text => fs.writeFileSync(TARGET, text),
    error => {
      console.error(error);
      process.exit(1);
    }
  );
}
