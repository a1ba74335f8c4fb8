/**
 * Writes src/panel/wire.ts, the panel's wire types, from the protocol's one definition:
 * jupyter_agent/jupyter/panel/protocol.py, whose JSON Schema is checked in as
 * jupyter_agent/jupyter/panel/panel_protocol.json (`npm run build:wire`). The schema's types
 * become TypeScript with json-schema-to-typescript; its `x-constants` become constants.
 * test/wire.test.ts renders it again and fails when the file is stale.
 */
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const SOURCE = path.resolve(
  ROOT,
  '../jupyter_agent/jupyter/panel/panel_protocol.json'
);
const TARGET = path.join(ROOT, 'src', 'panel', 'wire.ts');

const BANNER =
  '/**\n' +
  " * The panel's wire protocol: transcript entries, the messages each side sends and the\n" +
  " * synced traits. Generated from jupyter_agent/jupyter/panel/protocol.py's JSON Schema\n" +
  ' * (panel_protocol.json) by scripts/wire.js (`npm run build:wire`). Do not edit:\n' +
  ' * test/wire.test.ts fails when this file is not what the schema gives.\n' +
  ' */';

function readSchema() {
  return JSON.parse(fs.readFileSync(SOURCE, 'utf8'));
}

/** The TypeScript source for `schema`, formatted as prettier would. */
async function render(schema) {
  const { compile } = require('json-schema-to-typescript');
  const { 'x-constants': constants, ...types } = schema;
  let out = await compile(types, 'PanelProtocol', {
    bannerComment: BANNER,
    additionalProperties: false,
    unreachableDefinitions: true,
    format: false
  });
  for (const [name, value] of Object.entries(constants)) {
    out += `\nexport const ${name} = ${JSON.stringify(value)} as const;\n`;
  }
  const prettier = require('prettier');
  const options = (await prettier.resolveConfig(TARGET)) ?? {};
  return prettier.format(out, { ...options, parser: 'typescript' });
}

module.exports = { SOURCE, TARGET, readSchema, render };

if (require.main === module) {
  render(readSchema()).then(
    text => fs.writeFileSync(TARGET, text),
    error => {
      console.error(error);
      process.exit(1);
    }
  );
}
