#!/usr/bin/env node
// Envelope files: encrypt a file of any size locally under a fresh data key from
// GenerateDataKey, keeping the sealed data key in the file's header. Only the 81-byte
// sealed key goes to the service, however large the file. The format is
// docs/FORMAT.md's "Envelope file (0x03)"; the sealbox CLI (--envelope) and the Python
// and Go examples read and write the same files.
//
//     SEALBOX_TOKEN=... node envelope.js seal|open --key NAME [--aad TEXT] IN OUT [HOST:PORT]
//
// As a module: sealFile(client, auth, key, inPath, outPath, associatedData) and
// openFile(...), each resolving to the key version of the sealed data key.
//
//     header  = 0x03 | S (u32 BE) | nonce prefix (7) | L (u16 BE) | sealed data key (L)
//     segment = AES-256-GCM(data key, nonce = prefix || u32 BE index || last flag,
//                           AAD = header[0..12), S plaintext bytes, the last fewer)
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');

const { checksum, verify } = require('./crc32c');
const { Failure, fail, loadModules, loadService, unary, report } = require('./seal_open');

const FORMAT = 0x03;
const SEGMENT_SIZE = 1 << 20; // what writers use; readers take any valid S from the header
const MIN_SEGMENT_SIZE = 4096;
const MAX_SEGMENT_SIZE = 4 << 20;
const MIN_SEALED_KEY = 49;
const MAX_SEALED_KEY = 1024;
const DATA_KEY_BYTES = 32;
const TAG_BYTES = 16;
const CALL_TIMEOUT_MS = 60000; // for each of the (two at most) calls

const USAGE = `usage: node envelope.js seal|open --key NAME [--aad TEXT] IN OUT [HOST:PORT]
                        [--proto-dir DIR]

  seal          encrypt IN into the envelope file OUT
  open          decrypt the envelope file IN into OUT (written only once all of it verified)
  HOST:PORT     the sealbox server (default 127.0.0.1:50051), plaintext gRPC
  --key         key name of the caller's tenant
  --aad         associated data (text): opening needs the same
  --proto-dir   folder holding sealbox/v1/data.proto (default: the project's proto/)

The tenant token is read from the SEALBOX_TOKEN environment variable.`;

// The input is not an envelope file, or does not verify.
class EnvelopeError extends Failure {}

function nonce(prefix, index, last) {
  if (index >= 2 ** 32) throw new EnvelopeError('too many segments for one envelope file');
  const bytes = Buffer.alloc(12);
  prefix.copy(bytes, 0);
  bytes.writeUInt32BE(index, 7);
  bytes[11] = last ? 0x01 : 0x00;
  return bytes;
}

function call(client, method, request, auth) {
  return unary(client, method, request, auth, CALL_TIMEOUT_MS, loadModules().grpc);
}

// Reads `length` bytes into `buffer` (fewer only at the end of the file): the bytes read.
async function readFully(file, buffer, length) {
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await file.read(buffer, filled, length - filled, null);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

// Runs write(out) into a temporary file beside `target` and renames it to `target` only
// if write succeeds: on any failure it is removed and `target` is left as it was. The
// file is created 0600, as it may hold plaintext.
async function writeAtomically(target, write) {
  const temp = path.join(path.dirname(path.resolve(target)),
    `.${path.basename(target)}.${crypto.randomBytes(6).toString('hex')}.tmp`);
  const file = await fs.promises.open(temp, 'wx', 0o600);
  const out = async (bytes) => {
    for (let done = 0; done < bytes.length;) {
      done += (await file.write(bytes, done)).bytesWritten;
    }
  };
  try {
    await write(out);
    await file.sync(); // the data is on disk before the name points at it
    await file.close();
    await fs.promises.rename(temp, target);
  } catch (err) {
    await file.close().catch(() => {});
    await fs.promises.rm(temp, { force: true });
    throw err;
  }
}

async function sealFile(client, auth, key, inPath, outPath, associatedData = Buffer.alloc(0)) {
  const source = await fs.promises.open(inPath, 'r'); // before the call: fail early
  try {
    const response = await call(client, 'GenerateDataKey', {
      key, data_key_bytes: DATA_KEY_BYTES, include_plaintext: true,
      associated_data: associatedData, associated_data_crc32c: checksum(associatedData),
    }, auth);
    const dataKey = response.plaintext;
    try {
      verify('GenerateDataKey', response, ['plaintext', 'ciphertext'],
        ['verified_associated_data_crc32c']);
      const sealedKey = response.ciphertext;
      if (dataKey.length !== DATA_KEY_BYTES || sealedKey.length > MAX_SEALED_KEY) {
        throw new EnvelopeError('GenerateDataKey returned an unexpected data key');
      }
      const header = Buffer.alloc(14 + sealedKey.length);
      header[0] = FORMAT;
      header.writeUInt32BE(SEGMENT_SIZE, 1);
      crypto.randomFillSync(header, 5, 7);
      header.writeUInt16BE(sealedKey.length, 12);
      sealedKey.copy(header, 14);
      const prefix = header.subarray(5, 12);
      const aad = header.subarray(0, 12);

      await writeAtomically(outPath, async (out) => {
        await out(header);
        const buffer = Buffer.alloc(SEGMENT_SIZE);
        for (let index = 0; ; index++) {
          // A short read means the end of the file: that is the last segment, empty
          // when the file is a whole number of segments long.
          const plaintext = await readFully(source, buffer, SEGMENT_SIZE);
          const last = plaintext.length < SEGMENT_SIZE;
          const cipher = crypto.createCipheriv('aes-256-gcm', dataKey,
            nonce(prefix, index, last));
          cipher.setAAD(aad);
          await out(Buffer.concat([cipher.update(plaintext), cipher.final(),
            cipher.getAuthTag()]));
          if (last) break;
        }
      });
    } finally {
      dataKey.fill(0); // our copy; OpenSSL wipes its own when each cipher is freed
    }
    return response.key_version;
  } finally {
    await source.close();
  }
}

// { segmentSize, prefix, aad, sealedKey } from an envelope file's header.
async function readHeader(source) {
  const notEnvelope = () => new EnvelopeError('not a sealbox envelope file');
  const fixed = await readFully(source, Buffer.alloc(14), 14);
  if (fixed.length < 14 || fixed[0] !== FORMAT) throw notEnvelope();
  const segmentSize = fixed.readUInt32BE(1);
  const sealedLength = fixed.readUInt16BE(12);
  if (segmentSize < MIN_SEGMENT_SIZE || segmentSize > MAX_SEGMENT_SIZE ||
      (segmentSize & (segmentSize - 1)) !== 0 ||
      sealedLength < MIN_SEALED_KEY || sealedLength > MAX_SEALED_KEY) {
    throw notEnvelope();
  }
  const sealedKey = await readFully(source, Buffer.alloc(sealedLength), sealedLength);
  if (sealedKey.length < sealedLength) throw notEnvelope();
  return { segmentSize, prefix: fixed.subarray(5, 12), aad: fixed.subarray(0, 12), sealedKey };
}

async function openFile(client, auth, key, inPath, outPath, associatedData = Buffer.alloc(0)) {
  const source = await fs.promises.open(inPath, 'r');
  try {
    const { segmentSize, prefix, aad, sealedKey } = await readHeader(source);
    const response = await call(client, 'Open', {
      key, ciphertext: sealedKey, associated_data: associatedData,
      ciphertext_crc32c: checksum(sealedKey), associated_data_crc32c: checksum(associatedData),
    }, auth);
    const dataKey = response.plaintext;
    try {
      verify('Open', response, ['plaintext'],
        ['verified_ciphertext_crc32c', 'verified_associated_data_crc32c']);
      if (dataKey.length !== DATA_KEY_BYTES) {
        throw new EnvelopeError('not a sealbox envelope file (its sealed key is not a data key)');
      }
      await writeAtomically(outPath, async (out) => {
        const buffer = Buffer.alloc(segmentSize + TAG_BYTES);
        for (let index = 0; ; index++) {
          // S + 16 bytes are a full segment, never the last (a last one is shorter);
          // fewer, at the end of the file, are the last segment.
          const segment = await readFully(source, buffer, segmentSize + TAG_BYTES);
          const last = segment.length < segmentSize + TAG_BYTES;
          if (segment.length < TAG_BYTES) throw new EnvelopeError('decryption failed');
          const decipher = crypto.createDecipheriv('aes-256-gcm', dataKey,
            nonce(prefix, index, last), { authTagLength: TAG_BYTES });
          decipher.setAAD(aad);
          decipher.setAuthTag(segment.subarray(segment.length - TAG_BYTES));
          let plaintext;
          try {
            plaintext = Buffer.concat([decipher.update(segment.subarray(0, -TAG_BYTES)),
              decipher.final()]);
          } catch {
            throw new EnvelopeError('decryption failed');
          }
          await out(plaintext); // only once its tag verified
          if (last) break;
        }
      });
    } finally {
      dataKey.fill(0);
    }
    return response.key_version;
  } finally {
    await source.close();
  }
}

function parseCommandLine(argv) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        key: { type: 'string' },
        aad: { type: 'string', default: '' },
        'proto-dir': { type: 'string', default: path.join(__dirname, '..', '..', '..', 'proto') },
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
  const [command, input, output, server = '127.0.0.1:50051', ...rest] = positionals;
  if (!['seal', 'open'].includes(command) || !output || rest.length > 0) fail(USAGE);
  if (!values.key) fail(`--key is required\n${USAGE}`);
  return {
    command, input, output, server, key: values.key, aad: Buffer.from(values.aad),
    protoDir: path.resolve(values['proto-dir']),
  };
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
    const run = args.command === 'seal' ? sealFile : openFile;
    const version = await run(client, auth, args.key, args.input, args.output, args.aad);
    console.log(`${args.command}: ${args.input} -> ${args.output} (key version ${version}), OK`);
  } finally {
    client.close();
  }
}

if (require.main === module) {
  main().catch((err) => report('envelope.js', err));
}

module.exports = { sealFile, openFile, EnvelopeError };
