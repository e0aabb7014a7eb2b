// Validates AsyncAPI documents with @asyncapi/parser (the official parser:
// the AsyncAPI JSON Schema of @asyncapi/specs, the bindings' schemas, the
// payloads' schemas and the spec's semantic rules), as .ci/asyncapi runs it.
//
//   NODE_PATH=DIR/node_modules node .ci/asyncapi-validate.js FILE...
//
// It prints each diagnostic as FILE:LINE:COL: SEVERITY: CODE: MESSAGE and
// exits 1 when a document has an error (severity 0) or cannot be read, 2
// without a FILE, 0 otherwise. Warnings and hints are printed, not fatal.
'use strict';

const fs = require('node:fs');
const { Parser } = require('@asyncapi/parser');

const severities = ['error', 'warning', 'info', 'hint'];

async function validate(parser, file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    console.log(`${file}: error: ${err.message}`);
    return false;
  }
  const { diagnostics } = await parser.parse(text, { source: file });
  let ok = true;
  for (const d of diagnostics) {
    // Ranges count from 0; editors count lines and columns from 1.
    const start = (d.range && d.range.start) || { line: 0, character: 0 };
    const path = d.path && d.path.length ? ` (at ${d.path.join('.')})` : '';
    console.log(`${file}:${start.line + 1}:${start.character + 1}: ${severities[d.severity] || d.severity}: ${d.code}: ${d.message}${path}`);
    if (d.severity === 0) {
      ok = false;
    }
  }
  return ok;
}

async function main(files) {
  if (files.length === 0) {
    console.error('usage: node .ci/asyncapi-validate.js FILE...');
    return 2;
  }
  const parser = new Parser();
  let failed = 0;
  for (const file of files) {
    if (!(await validate(parser, file))) {
      failed++;
    }
  }
  return failed > 0 ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err) => { console.error(err); process.exitCode = 1; },
);
