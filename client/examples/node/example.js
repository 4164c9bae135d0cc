#!/usr/bin/env node
// A short user of the sealbox Node.js library (client/node): seals and opens files
// with the unary calls, the streams and envelope files.
//
//     SEALBOX_TOKEN=... node example.js COMMAND --key KEY [--aad TEXT] IN OUT
//
// The same interface as the other languages' examples, so a file sealed by one opens
// with any other. Exits 0 on success; on an error prints one line
// `example.js: <ErrorClassName>: <message>` and exits 1 (2 for a usage error).
'use strict';

const fs = require('node:fs');
const { parseArgs } = require('node:util');
const { Client } = require('sealbox');

const USAGE = `usage: node example.js COMMAND --key KEY [--aad TEXT] IN OUT

  seal | open                     IN to OUT with one unary call (a small file)
  seal-stream | open-stream       IN to OUT through SealStream / OpenStream
  seal-envelope | open-envelope   IN to OUT as an envelope file (docs/FORMAT.md, 0x03)

SEALBOX_SERVER is the server (default 127.0.0.1:50051), SEALBOX_TOKEN the token.`;

const COMMANDS = {
  seal: async (client, key, input, output, associatedData) => {
    const { ciphertext } = await client.seal(key, fs.readFileSync(input), { associatedData });
    fs.writeFileSync(output, ciphertext);
  },
  open: async (client, key, input, output, associatedData) => {
    const { plaintext } = await client.open(key, fs.readFileSync(input), { associatedData });
    fs.writeFileSync(output, plaintext);
  },
  'seal-stream': (client, key, input, output, associatedData) =>
    client.sealFile(key, input, output, { associatedData }),
  'open-stream': (client, key, input, output, associatedData) =>
    client.openFile(key, input, output, { associatedData }),
  'seal-envelope': (client, key, input, output, associatedData) =>
    client.sealEnvelopeFile(key, input, output, { associatedData }),
  'open-envelope': (client, key, input, output, associatedData) =>
    client.openEnvelopeFile(key, input, output, { associatedData }),
};

function usage(message) {
  console.error(`example.js: ${message}\n${USAGE}`);
  process.exit(2);
}

async function main() {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: { key: { type: 'string' }, aad: { type: 'string', default: '' } },
    });
  } catch (err) {
    usage(err.message);
  }
  const [command, input, output, ...rest] = parsed.positionals;
  if (!Object.hasOwn(COMMANDS, command || '')) usage(`unknown command "${command || ''}"`);
  if (!output || rest.length > 0) usage('give IN and OUT');
  if (!parsed.values.key) usage('--key is required');

  const client = new Client(process.env.SEALBOX_SERVER || '127.0.0.1:50051',
    { token: process.env.SEALBOX_TOKEN });
  try {
    await COMMANDS[command](client, parsed.values.key, input, output, parsed.values.aad);
  } finally {
    client.close();
  }
}

main().catch((err) => {
  console.error(`example.js: ${err.name}: ${err.message}`);
  process.exitCode = 1;
});
