/**
 * jupyter_agent/jupyter/panel/static/panel.js, the bundle panel.py hands anywidget, is a build
 * artefact (every build makes it; the sdist and the wheel carry it): it must be there and
 * be what scripts/panel.js makes of src/panel/ now, or the panel runs older code.
 */
import { strict as assert } from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

const builder = require('../../scripts/panel.js') as {
  TARGET: string;
  bundle(): Promise<string>;
};

describe('the built panel', () => {
  it('static/panel.js is built and is what src/panel gives (run `npm run build:panel`)', async () => {
    assert.ok(
      existsSync(builder.TARGET),
      `${builder.TARGET} is missing: run \`npm run build:panel\` in js/ (every build does)`
    );
    const expected = await builder.bundle();
    assert.ok(
      readFileSync(builder.TARGET, 'utf8') === expected,
      `${builder.TARGET} is stale: run \`npm run build:panel\` in js/`
    );
  });

  it('is one self-contained ES module with the anywidget entry', async () => {
    const text = await builder.bundle();
    assert.doesNotMatch(text, /^\s*import\s/m);
    // Block comments aside: a bundled library's JSDoc may name a type `import("./x")`.
    const code = text.replace(/\/\*[\s\S]*?\*\//g, '');
    assert.doesNotMatch(code, /\bimport\(|\brequire\(/);
    assert.match(text, /^export \{\n {2}widget_default as default,/m);
  });

  it('the same sources give the same bytes', async () => {
    assert.equal(await builder.bundle(), await builder.bundle());
  });
});
