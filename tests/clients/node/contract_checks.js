// The Node.js library (client/node) against the client contract, without a server:
// client/contract/contract.json (retry policy, error table, envelope numbers) and the
// static vectors beside it (envelope files, status details). Needs no npm package:
// only the library's files that load none.
//
//   node --test tests/clients/node/contract_checks.js   (from the repository root)
'use strict';

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const test = require('node:test');

const root = process.env.SEALBOX_ROOT || process.cwd();
const lib = (name) => require(path.join(root, 'client/node/lib', name));
const retry = lib('retry.js');
const errors = lib('errors.js');
const statusDetails = lib('status_details.js');
const envelope = lib('envelope.js');

const contractDir = path.join(root, 'client/contract');
const contract = JSON.parse(fs.readFileSync(path.join(contractDir, 'contract.json'), 'utf8'));
const vectors = JSON.parse(fs.readFileSync(path.join(contractDir, 'vectors/vectors.json'), 'utf8'));
const policy = contract.serviceConfig.methodConfig[0].retryPolicy;
const table = contract.errors;

/** A service config duration ("0.1s") in milliseconds. */
function ms(duration) {
  assert.match(duration, /^[0-9.]+s$/);
  return Number(duration.slice(0, -1)) * 1000;
}

function code(name) {
  const n = errors.CODE_NAMES.indexOf(name);
  assert.ok(n >= 0, name);
  return n;
}

test('retry defaults are the service config', () => {
  assert.equal(retry.DEFAULT_POLICY.maxAttempts, policy.maxAttempts);
  assert.equal(retry.DEFAULT_POLICY.initialBackoffMs, ms(policy.initialBackoff));
  assert.equal(retry.DEFAULT_POLICY.maxBackoffMs, ms(policy.maxBackoff));
});

test('backoff ceilings grow by backoffMultiplier up to maxBackoff', (t) => {
  t.mock.method(Math, 'random', () => 1); // always the ceiling
  for (let n = 0; n < policy.maxAttempts - 1; n++) {
    const want = Math.min(ms(policy.maxBackoff), ms(policy.initialBackoff) * policy.backoffMultiplier ** n);
    assert.ok(Math.abs(retry.backoffMs(retry.retryPolicy(), n) - want) < 1e-9, `retry ${n}`);
  }
});

test('only the retryable codes are retried, maxAttempts times', async () => {
  const quick = retry.retryPolicy({ initialBackoffMs: 0, maxBackoffMs: 0 });
  for (const row of table.fromServer) {
    let calls = 0;
    await assert.rejects(retry.withRetries(quick, undefined, async () => {
      calls++;
      throw errors.errorFromStatus(code(row.code), 'x', row.reason === 'DECRYPTION_FAILED');
    }));
    const again = policy.retryableStatusCodes.includes(row.code) &&
      !contract.retry.neverRetriedReasons.includes(row.reason);
    assert.equal(calls, again ? policy.maxAttempts : 1, JSON.stringify(row));
  }
});

test('each status becomes the class the contract names', () => {
  for (const row of table.fromServer) {
    const error = errors.errorFromStatus(code(row.code), 'm', row.reason === 'DECRYPTION_FAILED');
    assert.equal(error.constructor.name, row.node, JSON.stringify(row));
    assert.ok(error instanceof errors[table.base.node]);
    assert.equal(error.codeName, row.code);
  }
  const made = { 'answer checksum wrong': new errors.ChecksumError('x'),
    'not an envelope file': new errors.EnvelopeFormatError('x') };
  for (const row of table.fromLibrary.filter((r) => made[r.case])) {
    assert.equal(made[row.case].constructor.name, row.node);
    assert.equal(made[row.case].codeName, row.code);
  }
});

test('status details vectors', () => {
  assert.equal(statusDetails.DOMAIN, table.domain);
  assert.equal(statusDetails.ERROR_INFO_TYPE, table.errorInfoType);
  for (const c of vectors.statusDetails.cases) {
    assert.equal(statusDetails.decryptionFailed(Buffer.from(c.hex, 'hex')), c.decryptionFailed, c.name);
  }
});

test('envelope numbers', () => {
  const e = contract.envelope;
  assert.equal(envelope.FORMAT, e.format);
  assert.equal(envelope.SEGMENT_BYTES, e.writerSegmentBytes);
  assert.equal(envelope.MIN_SEGMENT_BYTES, e.minSegmentBytes);
  assert.equal(envelope.MAX_SEGMENT_BYTES, e.maxSegmentBytes);
  assert.equal(envelope.MIN_SEALED_KEY, e.minSealedKeyBytes);
  assert.equal(envelope.MAX_SEALED_KEY, e.maxSealedKeyBytes);
  assert.equal(envelope.DATA_KEY_BYTES, e.dataKeyBytes);
  assert.equal(envelope.TAG_BYTES, e.tagBytes);
  assert.equal(envelope.FIXED_HEADER, e.fixedHeaderBytes);
});

test('envelope vectors', async () => {
  const dataKey = Buffer.from(vectors.envelope.dataKey, 'hex');
  const out = fs.mkdtempSync(path.join(process.env.TEST_TMPDIR || os.tmpdir(), 'contract-'));
  const kinds = { DecryptionFailed: errors.DecryptionFailedError, EnvelopeFormat: errors.EnvelopeFormatError };
  for (const c of vectors.envelope.cases) {
    const file = path.join(contractDir, 'vectors', c.file);
    const target = path.join(out, path.basename(file));
    const asked = [];
    const client = {
      async open(key, sealedKey) {
        asked.push(Buffer.from(sealedKey));
        return { plaintext: Buffer.from(dataKey), keyVersion: 1 }; // the library wipes it
      },
    };
    const opening = envelope.openEnvelopeFile(client, 'k', file, target, {});
    if (c.expect === 'ok') {
      await opening;
      const sha = crypto.createHash('sha256').update(fs.readFileSync(target)).digest('hex');
      assert.equal(sha, c.plaintextSha256, c.file);
      const bytes = fs.readFileSync(file);
      const length = bytes.readUInt16BE(contract.envelope.sealedKeyLengthOffset);
      const start = contract.envelope.fixedHeaderBytes;
      assert.deepEqual(asked, [bytes.subarray(start, start + length)], c.file);
    } else {
      await assert.rejects(opening, kinds[c.expect], c.file);
      assert.ok(!fs.existsSync(target), `${c.file}: output left behind`);
      if (c.expect === 'EnvelopeFormat') assert.deepEqual(asked, [], `${c.file}: Open called`);
    }
  }
});
