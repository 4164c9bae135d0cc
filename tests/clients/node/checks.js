// The Node.js library against the real server, one scenario per run (node_client_test.py
// starts the server and picks the scenario):
//
//     node checks.js calls|bigfile|retry|renewal [ARGS]
//
// Reads SEALBOX_SERVER and SEALBOX_TOKEN; fails with an assertion (exit 1) or prints
// one JSON line of figures for the Python side to check.
'use strict';

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');
const { Readable } = require('node:stream');

const sealbox = require('sealbox');
const checksums = require('sealbox/lib/checksums');

const { Client } = sealbox;
const SERVER = process.env.SEALBOX_SERVER;
const TOKEN = process.env.SEALBOX_TOKEN;
const MIB = 1 << 20;

async function collect(iterable) {
  const chunks = [];
  for await (const chunk of iterable) chunks.push(chunk);
  return Buffer.concat(chunks);
}

async function rejects(promise, Type, message) {
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof Type, `expected ${Type.name}, got ${err && err.name}: ${err && err.message}`);
    assert.ok(err instanceof sealbox.SealboxError);
    if (message) assert.match(err.message, message);
    return true;
  });
}

async function unaryAndBatch(client, retries) {
  const sealed = await client.seal('default', 'hello, sealbox', { associatedData: 'row-7' });
  assert.equal(sealed.keyVersion, 1);
  assert.equal(sealed.ciphertext.length, 14 + 49);
  const opened = await client.open('default', sealed.ciphertext, { associatedData: Buffer.from('row-7') });
  assert.equal(opened.plaintext.toString(), 'hello, sealbox');
  const rewrapped = await client.rewrap('default', sealed.ciphertext, { associatedData: 'row-7' });
  assert.deepEqual([rewrapped.keyVersion, rewrapped.previousKeyVersion], [1, 1]);
  assert.equal((await client.open('default', rewrapped.ciphertext, { associatedData: 'row-7' }))
    .plaintext.toString(), 'hello, sealbox');
  // Empty plaintext and associated data: checksums of nothing are 0, still checked.
  const empty = await client.seal('default', Buffer.alloc(0));
  assert.equal((await client.open('default', empty.ciphertext)).plaintext.length, 0);

  const tampered = Buffer.from(sealed.ciphertext);
  tampered[tampered.length - 1] ^= 1;
  await rejects(client.open('default', tampered, { associatedData: 'row-7' }), sealbox.DecryptionFailedError,
    /^decryption failed$/);
  await rejects(client.open('default', sealed.ciphertext, { associatedData: 'row-8' }),
    sealbox.DecryptionFailedError);
  await rejects(client.rewrap('default', tampered, { associatedData: 'row-7' }), sealbox.DecryptionFailedError);
  await rejects(client.seal('nope', 'x'), sealbox.NotFoundError);
  await rejects(client.seal('bad name!', 'x'), sealbox.InvalidArgumentError);
  await rejects(client.seal('default', Buffer.alloc(MIB + 1)), sealbox.ResourceExhaustedError);
  await rejects(client.renewToken(), sealbox.FailedPreconditionError, /does not expire/);
  // An InvalidArgumentError that is not a failed decryption is not one.
  await assert.rejects(client.seal('bad name!', 'x'),
    (err) => !(err instanceof sealbox.DecryptionFailedError));

  // A wrong request checksum: refused before any work.
  const bad = Buffer.from('payload');
  await rejects(client._rawUnary('Seal', {
    key: 'default', plaintext: bad, plaintext_crc32c: { value: sealbox.crc32c(bad) ^ 1 },
  }), sealbox.InvalidArgumentError, /^checksum mismatch/);

  // Batches: each item its own result or error.
  const sealedBatch = await client.sealBatch([
    { key: 'default', plaintext: 'one', associatedData: 'a' },
    { key: 'nope', plaintext: 'two' },
    { key: 'default', plaintext: Buffer.from('three') },
  ]);
  assert.deepEqual(sealedBatch.map((r) => r.ok), [true, false, true]);
  assert.ok(!sealedBatch[1].ok && sealedBatch[1].error instanceof sealbox.NotFoundError);
  const first = sealedBatch[0].ok ? sealedBatch[0].result.ciphertext : Buffer.alloc(0);
  const third = sealedBatch[2].ok ? sealedBatch[2].result.ciphertext : Buffer.alloc(0);
  const openedBatch = await client.openBatch([
    { key: 'default', ciphertext: first, associatedData: 'a' },
    { key: 'default', ciphertext: first, associatedData: 'b' },
    { key: 'default', ciphertext: third },
  ]);
  assert.deepEqual(openedBatch.map((r) => (r.ok ? r.result.plaintext.toString() : r.error.name)),
    ['one', 'DecryptionFailedError', 'three']);
  const rewrappedBatch = await client.rewrapBatch([
    { key: 'default', ciphertext: third }, { key: 'default', ciphertext: tampered },
  ]);
  assert.ok(rewrappedBatch[0].ok && rewrappedBatch[0].result.previousKeyVersion === 1);
  assert.ok(!rewrappedBatch[1].ok && rewrappedBatch[1].error instanceof sealbox.DecryptionFailedError);
  await rejects(client.sealBatch([]), sealbox.InvalidArgumentError);

  // Data keys: sealed only, or with the plaintext; 16 or 32 bytes; opened with open().
  const sealedOnly = await client.generateDataKey('default', { associatedData: 'dk' });
  assert.equal(sealedOnly.plaintext, null);
  const withKey = await client.generateDataKey('default', { bytes: 16, includePlaintext: true });
  assert.equal(withKey.plaintext && withKey.plaintext.length, 16);
  assert.equal((await client.open('default', sealedOnly.ciphertext, { associatedData: 'dk' }))
    .plaintext.length, 32);
  assert.deepEqual((await client.open('default', withKey.ciphertext)).plaintext, withKey.plaintext);

  assert.equal(retries.length, 0, 'nothing here may be retried');
}

async function streams(client, dir) {
  const payload = crypto.randomBytes(3 * MIB + 5);
  // Bytes in, a Node.js Readable in, a generator in, a function giving a fresh one.
  const ciphertext = await collect(client.sealStream('default', payload, { associatedData: 'file-1' }));
  assert.equal(ciphertext.length, 48 + 48 * (64 * 1024 + 16) + 5 + 16);
  const pieces = [ciphertext.subarray(0, 1000), ciphertext.subarray(1000, 2 * MIB), ciphertext.subarray(2 * MIB)];
  assert.deepEqual(await collect(client.openStream('default', Readable.from(pieces), { associatedData: 'file-1' })),
    payload);
  async function* generate() { yield* pieces; }
  assert.deepEqual(await collect(client.openStream('default', generate(), { associatedData: 'file-1' })), payload);
  assert.deepEqual(await collect(client.openStream('default', () => pieces, { associatedData: 'file-1' })), payload);
  const big = await collect(client.sealStream('default', Readable.from([payload]), { segmentSize: 4 * MIB }));
  assert.equal(big.length, 48 + payload.length + 16);

  // Tampered, truncated, other associated data: DecryptionFailedError at the end.
  const flipped = Buffer.from(ciphertext);
  flipped[ciphertext.length - 100] ^= 1;
  for (const [input, ad] of [[flipped, 'file-1'], [ciphertext.subarray(0, 48 + 65552), 'file-1'],
    [ciphertext, 'file-2']]) {
    await rejects(collect(client.openStream('default', input, { associatedData: ad })),
      sealbox.DecryptionFailedError, /^decryption failed$/);
  }
  await rejects(collect(client.sealStream('nope', payload)), sealbox.NotFoundError);
  // A caller that stops early cancels the call; the client stays usable.
  for await (const chunk of client.sealStream('default', payload)) {
    assert.ok(chunk.length > 0);
    break;
  }

  // Files: progress, and nothing left behind when opening fails.
  const source = path.join(dir, 'plain');
  fs.writeFileSync(source, payload);
  const progress = [];
  const sealed = await client.sealFile('default', source, path.join(dir, 'sealed'),
    { associatedData: 'f', onProgress: (done, total) => progress.push([done, total]) });
  assert.equal(sealed.bytesRead, payload.length);
  assert.deepEqual(progress[progress.length - 1], [payload.length, payload.length]);
  await client.openFile('default', path.join(dir, 'sealed'), path.join(dir, 'opened'), { associatedData: 'f' });
  assert.deepEqual(fs.readFileSync(path.join(dir, 'opened')), payload);
  const damaged = fs.readFileSync(path.join(dir, 'sealed'));
  damaged[damaged.length - 1] ^= 1;
  fs.writeFileSync(path.join(dir, 'damaged'), damaged);
  const out = fs.mkdtempSync(path.join(dir, 'out-'));
  await rejects(client.openFile('default', path.join(dir, 'damaged'), path.join(out, 'x'), { associatedData: 'f' }),
    sealbox.DecryptionFailedError);
  assert.deepEqual(fs.readdirSync(out), [], 'a partial or temporary file was left');
}

async function envelopes(client, dir) {
  const MIB_SEG = MIB;
  for (const size of [0, 1, MIB_SEG - 1, MIB_SEG, MIB_SEG + 1, 2 * MIB_SEG + 7]) {
    const source = path.join(dir, `env-${size}`);
    fs.writeFileSync(source, crypto.randomBytes(size));
    const sealed = await client.sealEnvelopeFile('default', source, `${source}.env`, { associatedData: 'e' });
    assert.equal(fs.statSync(`${source}.env`).size, 14 + 81 + size + 16 * (Math.floor(size / MIB_SEG) + 1));
    assert.equal(sealed.bytesWritten, fs.statSync(`${source}.env`).size);
    await client.openEnvelopeFile('default', `${source}.env`, `${source}.out`, { associatedData: 'e' });
    assert.deepEqual(fs.readFileSync(`${source}.out`), fs.readFileSync(source));
  }
  const good = fs.readFileSync(path.join(dir, `env-${2 * MIB_SEG + 7}.env`));
  const flipped = Buffer.from(good);
  flipped[14 + 81 + MIB_SEG + 16 + 5] ^= 1;
  const cases = [
    [flipped, 'e', sealbox.DecryptionFailedError], [good.subarray(0, good.length - 1), 'e', sealbox.DecryptionFailedError],
    [Buffer.concat([good, Buffer.alloc(1)]), 'e', sealbox.DecryptionFailedError],
    [good.subarray(0, 14 + 81 + 2 * (MIB_SEG + 16)), 'e', sealbox.DecryptionFailedError],
    [good, 'other', sealbox.DecryptionFailedError],
    [Buffer.concat([Buffer.from([2]), good.subarray(1)]), 'e', sealbox.EnvelopeFormatError],
    [good.subarray(0, 20), 'e', sealbox.EnvelopeFormatError],
  ];
  for (const [bytes, ad, Type] of cases) {
    fs.writeFileSync(path.join(dir, 'damaged.env'), bytes);
    const out = fs.mkdtempSync(path.join(dir, 'out-'));
    await rejects(client.openEnvelopeFile('default', path.join(dir, 'damaged.env'), path.join(out, 'x'),
      { associatedData: ad }), Type);
    assert.deepEqual(fs.readdirSync(out), []);
  }
}

function checksumVerification() {
  // docs/FORMAT.md, "Checksums".
  assert.deepEqual(['123456789', 'hello, sealbox', ''].map((s) => sealbox.crc32c(Buffer.from(s))),
    [3808858755, 3630349962, 0]);
  const ciphertext = Buffer.from('a ciphertext');
  const answer = {
    ciphertext, ciphertext_crc32c: sealbox.crc32c(ciphertext),
    verified_plaintext_crc32c: true, verified_associated_data_crc32c: true,
  };
  const flags = ['verified_plaintext_crc32c', 'verified_associated_data_crc32c'];
  checksums.verify('Seal', answer, ['ciphertext'], flags);
  const corrupted = { ...answer, ciphertext: Buffer.from('a ciphertexT') };
  assert.throws(() => checksums.verify('Seal', corrupted, ['ciphertext'], flags),
    (err) => err instanceof sealbox.ChecksumError && err.codeName === 'DATA_LOSS' &&
      /does not match its CRC32C/.test(err.message));
  assert.throws(() => checksums.verify('Seal', { ...answer, verified_plaintext_crc32c: false },
    ['ciphertext'], flags), sealbox.ChecksumError);
}

async function calls() {
  const dir = fs.mkdtempSync(path.join(process.env.TEST_TMPDIR || '/tmp', 'node-calls-'));
  const retries = [];
  const client = new Client(SERVER, { token: TOKEN, retry: { onRetry: (info) => retries.push(info) } });
  try {
    checksumVerification();
    await unaryAndBatch(client, retries);
    await streams(client, dir);
    await envelopes(client, dir);
    // No token, a wrong one: UnauthenticatedError, not retried.
    for (const token of [undefined, 'sbx_not-a-token']) {
      const other = new Client(SERVER, { token });
      await rejects(other.seal('default', 'x'), sealbox.UnauthenticatedError);
      other.close();
    }
    // Nothing listening: UnavailableError after the retries, within the deadline.
    const started = Date.now();
    const nowhere = new Client(process.argv[3], { token: TOKEN, timeoutMs: 3000, retry: {
      onRetry: (info) => retries.push(info) } });
    await rejects(nowhere.seal('default', 'x'), sealbox.UnavailableError);
    // The deadline is honoured (no wait past it), however slow a busy machine is.
    const took = Date.now() - started;
    assert.ok(took < 6000, `${took} ms against a 3000 ms deadline`);
    assert.ok(retries.length >= 1 && retries.length <= 7, `${retries.length} retries`);  // 8 attempts
    assert.ok(retries.every((r) => r.error instanceof sealbox.UnavailableError));
    // A one-shot stream input is never retried; bytes are.
    const before = retries.length;
    await rejects(collect(nowhere.sealStream('default', Readable.from([Buffer.from('x')]))),
      sealbox.UnavailableError);
    assert.equal(retries.length, before);
    nowhere.close();
    console.log(JSON.stringify({ ok: true }));
  } finally {
    client.close();
  }
}

async function bigfile(source) {
  const dir = path.dirname(source);
  const client = new Client(SERVER, { token: TOKEN });
  const started = process.hrtime.bigint();
  let progressCalls = 0;
  const onProgress = () => { progressCalls++; };
  await client.sealFile('default', source, path.join(dir, 'big.sealed'), { associatedData: 'big', onProgress });
  const sealedAt = process.hrtime.bigint();
  await client.openFile('default', path.join(dir, 'big.sealed'), path.join(dir, 'big.opened'),
    { associatedData: 'big', onProgress });
  const openedAt = process.hrtime.bigint();
  client.close();
  console.log(JSON.stringify({
    maxRssKiB: process.resourceUsage().maxRSS, progressCalls,
    sealSeconds: Number(sealedAt - started) / 1e9, openSeconds: Number(openedAt - sealedAt) / 1e9,
  }));
}

async function retry() {
  const attempts = [];
  const client = new Client(SERVER, {
    token: TOKEN, retry: { maxAttempts: 12, onRetry: (info) => attempts.push(info.attempt) },
  });
  const ciphertext = (await client.seal('default', 'before')).ciphertext;
  const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  console.log('ready'); // the test stops the server, then says "go"
  assert.equal((await lines.next()).value, 'go');
  const started = Date.now();
  const opened = await client.open('default', ciphertext);
  assert.equal(opened.plaintext.toString(), 'before');
  const seconds = (Date.now() - started) / 1000;
  console.log(JSON.stringify({ retries: attempts.length, seconds }));
  client.close();
  process.exit(0);
}

async function renewal(seconds) {
  const renewed = [];
  const client = new Client(SERVER, {
    token: TOKEN,
    tokenRenewal: { onRenewed: (token, expiresAt) => renewed.push({ token, expiresAt }) },
  });
  const end = Date.now() + Number(seconds) * 1000;
  let calls = 0;
  while (Date.now() < end) {
    const sealed = await client.seal('default', `call ${calls}`);
    assert.equal((await client.open('default', sealed.ciphertext)).plaintext.toString(), `call ${calls}`);
    calls++;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.equal(client.token, renewed[renewed.length - 1].token);
  // The original token has expired by now.
  const original = new Client(SERVER, { token: TOKEN });
  await rejects(original.seal('default', 'x'), sealbox.UnauthenticatedError);
  original.close();
  client.close();
  console.log(JSON.stringify({ calls, renewals: renewed.length, tokens: new Set(renewed.map((r) => r.token)).size }));
}

const SCENARIOS = { calls, bigfile, retry, renewal };
SCENARIOS[process.argv[2]](...process.argv.slice(3)).catch((err) => {
  console.error(err);
  process.exit(1);
});
