#!/usr/bin/env node
// A minimal sealbox client in Node.js: seal a message, open it again, stream ~3 MiB.
//
// Needs the packages in package.json (`npm ci` in this folder). The service definition
// is loaded from the project's .proto files at run time, so nothing generated is
// checked in:
//
//     SEALBOX_TOKEN=... node seal_open.js [HOST:PORT] [--proto-dir DIR] [--key NAME]
//
// Mirrors client/examples/python/seal_open.py. Exits 0 on success, 1 on any failure.
// The unary calls carry CRC32C checksums both ways (crc32c.js). envelope.js reuses the
// loading and call helpers exported at the end.
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');

const { ChecksumError, checksum, verify } = require('./crc32c');

const USAGE = `usage: node seal_open.js [HOST:PORT] [--proto-dir DIR] [--key NAME] [--timeout SECONDS]

  HOST:PORT     the sealbox server (default 127.0.0.1:50051), plaintext gRPC
  --proto-dir   folder holding sealbox/v1/data.proto (default: the project's proto/)
  --key         key name of the caller's tenant (default: default)
  --timeout     deadline of each call in seconds (default: 60)

The tenant token is read from the SEALBOX_TOKEN environment variable.`;

class Failure extends Error {}

function fail(message) {
  throw new Failure(message);
}

function loadModules() {
  try {
    return { grpc: require('@grpc/grpc-js'), protoLoader: require('@grpc/proto-loader') };
  } catch (err) {
    if (err.code === 'MODULE_NOT_FOUND') {
      fail(`cannot load the gRPC packages (${err.message.split('\n')[0]}); ` +
           `run \`npm ci\` in ${__dirname} or point NODE_PATH at its node_modules`);
    }
    throw err;
  }
}

function parseCommandLine(argv) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        'proto-dir': { type: 'string', default: path.join(__dirname, '..', '..', '..', 'proto') },
        key: { type: 'string', default: 'default' },
        timeout: { type: 'string', default: '60' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    fail(`${err.message}\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  if (positionals.length > 1) fail(`too many arguments: ${positionals.join(' ')}\n${USAGE}`);
  const timeout = Number(values.timeout);
  if (!(timeout > 0)) fail(`--timeout must be a positive number of seconds, not "${values.timeout}"`);
  return {
    server: positionals[0] || '127.0.0.1:50051',
    protoDir: path.resolve(values['proto-dir']),
    key: values.key,
    timeoutMs: timeout * 1000,
  };
}

function loadService(grpc, protoLoader, protoDir) {
  const file = path.join(protoDir, 'sealbox', 'v1', 'data.proto');
  if (!fs.existsSync(file)) fail(`no sealbox/v1/data.proto under ${protoDir} (use --proto-dir)`);
  let definition;
  try {
    // keepCase: the message fields keep their .proto names (plaintext_chunk);
    // bytes fields arrive as Buffers.
    definition = protoLoader.loadSync('sealbox/v1/data.proto', {
      includeDirs: [protoDir], keepCase: true, longs: String, enums: String,
      defaults: true, oneofs: true,
    });
  } catch (err) {
    fail(`cannot load ${file}: ${err.message}`);
  }
  return grpc.loadPackageDefinition(definition).sealbox.v1.Crypto;
}

// "Seal failed: UNAUTHENTICATED: invalid token" for a gRPC error, the message otherwise.
function describe(what, err, grpc) {
  if (err && typeof err.code === 'number') {
    const name = Object.keys(grpc.status).find((k) => grpc.status[k] === err.code) || err.code;
    return `${what} failed: ${name}: ${err.details || err.message}`;
  }
  return `${what} failed: ${err && err.message ? err.message : err}`;
}

function unary(client, method, request, metadata, timeoutMs, grpc) {
  return new Promise((resolve, reject) => {
    client[method](request, metadata, { deadline: Date.now() + timeoutMs }, (err, response) => {
      if (err) reject(new Failure(describe(method, err, grpc)));
      else resolve(response);
    });
  });
}

// Runs a bidirectional streaming call: sends `start`, then `data` in `chunkSize` pieces
// (respecting flow control), half-closes, and resolves to the concatenated `outField`
// of every response. A call that ends with an error status rejects (discard anything
// received: for OpenStream it may be a truncated or tampered stream).
function stream(client, method, start, inField, data, chunkSize, outField, metadata,
                timeoutMs, grpc) {
  return new Promise((resolve, reject) => {
    const call = client[method](metadata, { deadline: Date.now() + timeoutMs });
    const received = [];
    let failed = false;
    call.on('data', (response) => received.push(response[outField]));
    call.on('error', (err) => {
      failed = true;
      reject(new Failure(describe(method, err, grpc)));
    });
    // Done once every response was read ('end') and the call ended OK ('status').
    let ended = false;
    let ok = false;
    const finish = () => {
      if (ended && ok && !failed) resolve(Buffer.concat(received));
    };
    call.on('end', () => { ended = true; finish(); });
    call.on('status', (status) => { ok = status.code === grpc.status.OK; finish(); });

    let offset = 0;
    const writeMore = () => {
      while (offset < data.length && !failed) {
        const chunk = data.subarray(offset, offset + chunkSize);
        offset += chunk.length;
        if (!call.write({ [inField]: chunk })) {
          call.once('drain', writeMore);
          return;
        }
      }
      if (!failed) call.end();
    };
    call.write({ start });
    writeMore();
  });
}

async function main() {
  const args = parseCommandLine(process.argv.slice(2));
  const token = process.env.SEALBOX_TOKEN;
  if (!token) fail('set SEALBOX_TOKEN to a tenant token');

  const { grpc, protoLoader } = loadModules();
  const Crypto = loadService(grpc, protoLoader, args.protoDir);
  const client = new Crypto(args.server, grpc.credentials.createInsecure());
  const auth = new grpc.Metadata();
  auth.set('authorization', `Bearer ${token}`);

  try {
    // Unary: small values such as database fields. The server checks the checksums we
    // send; verify() checks the ones it sends back, and that it did check ours.
    const message = Buffer.from('hello from node');
    const ad = Buffer.from('row-7');
    const sealed = await unary(client, 'Seal', {
      key: args.key, plaintext: message, associated_data: ad,
      plaintext_crc32c: checksum(message), associated_data_crc32c: checksum(ad),
    }, auth, args.timeoutMs, grpc);
    verify('Seal', sealed, ['ciphertext'],
      ['verified_plaintext_crc32c', 'verified_associated_data_crc32c']);
    const opened = await unary(client, 'Open', {
      key: args.key, ciphertext: sealed.ciphertext, associated_data: ad,
      ciphertext_crc32c: checksum(sealed.ciphertext), associated_data_crc32c: checksum(ad),
    }, auth, args.timeoutMs, grpc);
    verify('Open', opened, ['plaintext'],
      ['verified_ciphertext_crc32c', 'verified_associated_data_crc32c']);
    if (!opened.plaintext.equals(message)) fail('Open returned different bytes than were sealed');
    console.log(`unary: sealed ${sealed.ciphertext.length} bytes under version ` +
                `${sealed.key_version}, opened OK`);

    // Streaming: any size, sent in chunks of any size.
    const payload = crypto.randomBytes(3 * 1024 * 1024 + 5);
    const ciphertext = await stream(client, 'SealStream', { key: args.key },
      'plaintext_chunk', payload, 100000, 'ciphertext_chunk', auth, args.timeoutMs, grpc);
    const plaintext = await stream(client, 'OpenStream', { key: args.key },
      'ciphertext_chunk', ciphertext, 65536, 'plaintext_chunk', auth, args.timeoutMs, grpc);
    if (!plaintext.equals(payload)) fail('OpenStream returned different bytes than were sealed');
    console.log(`stream: ${payload.length} bytes -> ${ciphertext.length} bytes and back, OK`);
  } finally {
    client.close();
  }
}

// Prints a failure as one line (a stack only for the unexpected: not a failed call, a
// checksum or a missing or unreadable file) and sets exit code 1.
function report(script, err) {
  if (err instanceof Failure || err instanceof ChecksumError || (err && err.syscall)) {
    console.error(`${script}: ${err.message}`);
  } else {
    console.error(`${script}: unexpected error:`, err);
  }
  process.exitCode = 1;
}

if (require.main === module) {
  main().catch((err) => report('seal_open.js', err));
}

module.exports = { Failure, fail, loadModules, loadService, unary, report };
