/**
 * Writes src/protocol.ts from the protocol's one definition: its names and error codes
 * from jupyter_agent/jupyter/bridge/bridge_protocol.json, and each operation's argument and
 * result types from jupyter_agent/jupyter/bridge/bridge_messages.json, the JSON Schema of
 * jupyter_agent/jupyter/bridge/messages.py (`npm run build:protocol`).
 * test/protocol.test.ts renders it again and fails when the file is stale.
 */
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const SOURCE = path.resolve(
  ROOT,
  '../jupyter_agent/jupyter/bridge/bridge_protocol.json'
);
const MESSAGES = path.resolve(
  ROOT,
  '../jupyter_agent/jupyter/bridge/bridge_messages.json'
);
const TARGET = path.join(ROOT, 'src', 'protocol.ts');

function comment(text, indent = '') {
  return `${indent}/** ${text.replace(/\*\//g, '*\\/')} */\n`;
}

/**
 * The TypeScript source for `spec` (the parsed bridge_protocol.json) and `messages`
 * (the parsed bridge_messages.json), formatted as prettier would.
 */
async function render(spec, messages = readMessages()) {
  let out =
    '/**\n' +
    " * The notebook bridge's names, error codes and message types, generated from\n" +
    ' * jupyter_agent/jupyter/bridge/bridge_protocol.json and bridge_messages.json by\n' +
    ' * scripts/protocol.js (`npm run build:protocol`). Do not edit:\n' +
    ' * test/protocol.test.ts fails when this file is not what the JSON gives.\n' +
    ' */\n\n';
  out += comment('The comm target the kernel opens.');
  out += `export const COMM_TARGET = ${JSON.stringify(spec.comm_target)};\n\n`;
  out += comment('The protocol version the kernel side speaks.');
  out += `export const PROTOCOL_VERSION = ${JSON.stringify(spec.version)};\n\n`;
  out += comment('The operations every frontend answers.');
  out += `export const OPERATIONS = ${JSON.stringify(Object.keys(spec.operations))} as const;\n\n`;
  out += 'export type Operation = (typeof OPERATIONS)[number];\n\n';
  out += comment(
    'What the frontend tells the kernel unasked: `{event, ...fields}`.'
  );
  out += `export const EVENTS = ${JSON.stringify(Object.keys(spec.events))} as const;\n\n`;
  out += 'export type BridgeEvent = (typeof EVENTS)[number];\n\n';
  out += comment(
    'The fields each error code carries in a failed reply, besides `code` and `message`.'
  );
  out += 'export interface IErrorFields {\n';
  for (const [code, error] of Object.entries(spec.errors)) {
    out += comment(error.meaning, '  ');
    const fields = Object.entries(error.fields);
    if (fields.length === 0) {
      out += `  ${code}: Record<string, never>;\n`;
    } else {
      out += `  ${code}: {\n`;
      for (const [name, meaning] of fields) {
        out += comment(meaning, '    ');
        out += `    ${name}: string;\n`;
      }
      out += '  };\n';
    }
  }
  out += '}\n\n';
  out += 'export type ErrorCode = keyof IErrorFields;\n\n';
  out += comment('Every error code, in the order the JSON lists them.');
  out += `export const ERROR_CODES: readonly ErrorCode[] = ${JSON.stringify(Object.keys(spec.errors))};\n`;
  const { compile } = require('json-schema-to-typescript');
  const { 'x-constants': constants, ...types } = messages;
  out += await compile(types, 'BridgeMessages', {
    bannerComment: '',
    additionalProperties: false,
    unreachableDefinitions: true,
    format: false
  });
  out += '\n' + comment('The arguments of operation `Op`.');
  out += 'export type ArgsOf<Op extends Operation> = OperationArgs[Op];\n';
  out += comment('The result of operation `Op`.');
  out += 'export type ResultOf<Op extends Operation> = OperationResults[Op];\n';
  for (const [name, value] of Object.entries(constants)) {
    out += `\nexport const ${name} = ${JSON.stringify(value)};\n`;
  }
  const prettier = require('prettier');
  const options = (await prettier.resolveConfig(TARGET)) ?? {};
  return prettier.format(out, { ...options, parser: 'typescript' });
}

function readSpec() {
  return JSON.parse(fs.readFileSync(SOURCE, 'utf8'));
}

function readMessages() {
  return JSON.parse(fs.readFileSync(MESSAGES, 'utf8'));
}

module.exports = { SOURCE, MESSAGES, TARGET, readSpec, readMessages, render };

if (require.main === module) {
  render(readSpec()).then(
    text => fs.writeFileSync(TARGET, text),
    error => {
      console.error(error);
      process.exit(1);
    }
  );
}
