/**
 * jupyter_agent/jupyter/static/panel.js is tracked (an install without Node.js ships it
 * as it is), so it must be what scripts/panel.js makes of src/panel/ now.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

const builder = require('../../scripts/panel.js') as {
  TARGET: string;
  bundle(): Promise<string>;
};

describe('the built panel', () => {
  it('static/panel.js is what src/panel gives (run `npm run build:panel`)', async () => {
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
