// Envelope files (docs/FORMAT.md, "Envelope file (0x03)"): a fresh AES-256 data key
// from GenerateDataKey encrypts the file here, in 1 MiB segments; the header keeps
// the data key sealed under the caller's key, so only that (81 bytes) goes to the
// service, however large the file.
//
//   header  = 0x03 | S (u32 BE) | nonce prefix (7) | L (u16 BE) | sealed data key (L)
//   segment = AES-256-GCM(data key, nonce = prefix || u32 BE index || last flag,
//                         AAD = header[0..12), S plaintext bytes, the last fewer)
'use strict';

const crypto = require('node:crypto');
const fsp = require('node:fs/promises');

const { DecryptionFailedError, EnvelopeFormatError } = require('./errors');
const { writeAtomically, readUpTo } = require('./files');

const FORMAT = 0x03;
const SEGMENT_BYTES = 1 << 20; // what writers use; readers take any valid S
const MIN_SEGMENT_BYTES = 4096;
const MAX_SEGMENT_BYTES = 4 << 20;
const MIN_SEALED_KEY = 49;
const MAX_SEALED_KEY = 1024;
const DATA_KEY_BYTES = 32;
const TAG_BYTES = 16;
const FIXED_HEADER = 14;

/** @param {Buffer} prefix @param {number} index @param {boolean} last */
function nonce(prefix, index, last) {
  if (index >= 2 ** 32) throw new EnvelopeFormatError('too many segments for one envelope file');
  const bytes = Buffer.alloc(12);
  prefix.copy(bytes, 0);
  bytes.writeUInt32BE(index, 7);
  bytes[11] = last ? 1 : 0;
  return bytes;
}

function decryptionFailed() {
  return new DecryptionFailedError(3, 'decryption failed');
}

/**
 * The loop sealing and opening share: reads pieces of `pieceBytes` from `input` (a
 * short one, possibly empty, is the last), writes what `transform` makes of each,
 * and reports the bytes read so far.
 * @param {import('node:fs/promises').FileHandle} input
 * @param {(bytes: Uint8Array) => Promise<void>} write
 * @param {number} pieceBytes
 * @param {(piece: Buffer, index: number, last: boolean) => Buffer} transform
 * @param {(read: number) => void} progress
 * @returns {Promise<{read: number, written: number}>}
 */
async function eachSegment(input, write, pieceBytes, transform, progress) {
  const buffer = Buffer.alloc(pieceBytes);
  let read = 0;
  let written = 0;
  for (let index = 0; ; index++) {
    const piece = await readUpTo(input, buffer, pieceBytes);
    const last = piece.length < pieceBytes;
    const output = transform(piece, index, last);
    await write(output); // when opening, only once the segment's tag verified
    read += piece.length;
    written += output.length;
    progress(read);
    if (last) return { read, written };
  }
}

/**
 * Seals `inPath` into the envelope file `outPath`.
 * @param {import('./client').Client} client
 * @param {string} key @param {string} inPath @param {string} outPath
 * @param {{associatedData?: string | Uint8Array, timeoutMs?: number,
 *          onProgress?: (done: number, total: number) => void}} options
 * @returns {Promise<{keyVersion: number, bytesRead: number, bytesWritten: number}>}
 */
async function sealEnvelopeFile(client, key, inPath, outPath, options) {
  const input = await fsp.open(inPath, 'r');
  try {
    const total = (await input.stat()).size;
    const dataKey = await client.generateDataKey(key, {
      associatedData: options.associatedData, bytes: DATA_KEY_BYTES, includePlaintext: true,
      timeoutMs: options.timeoutMs,
    });
    const secret = /** @type {Buffer} */ (dataKey.plaintext);
    try {
      const header = Buffer.alloc(FIXED_HEADER + dataKey.ciphertext.length);
      header[0] = FORMAT;
      header.writeUInt32BE(SEGMENT_BYTES, 1);
      const prefix = crypto.randomBytes(7);
      prefix.copy(header, 5);
      header.writeUInt16BE(dataKey.ciphertext.length, 12);
      dataKey.ciphertext.copy(header, FIXED_HEADER);
      const aad = header.subarray(0, 12);
      let counts = { read: 0, written: 0 };
      await writeAtomically(outPath, async (write) => {
        await write(header);
        // A full segment is never the last; a short one (possibly empty) is.
        counts = await eachSegment(input, write, SEGMENT_BYTES, (plaintext, index, last) => {
          const cipher = crypto.createCipheriv('aes-256-gcm', secret, nonce(prefix, index, last),
            { authTagLength: TAG_BYTES });
          cipher.setAAD(aad);
          return Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
        }, (read) => options.onProgress && options.onProgress(read, total));
      });
      return { keyVersion: dataKey.keyVersion, bytesRead: counts.read,
        bytesWritten: header.length + counts.written };
    } finally {
      secret.fill(0);
    }
  } finally {
    await input.close();
  }
}

/**
 * Opens the envelope file `inPath` into `outPath`, written only once every segment
 * verified.
 * @param {import('./client').Client} client
 * @param {string} key @param {string} inPath @param {string} outPath
 * @param {{associatedData?: string | Uint8Array, timeoutMs?: number,
 *          onProgress?: (done: number, total: number) => void}} options
 * @returns {Promise<{keyVersion: number, bytesRead: number, bytesWritten: number}>}
 */
async function openEnvelopeFile(client, key, inPath, outPath, options) {
  const input = await fsp.open(inPath, 'r');
  try {
    const total = (await input.stat()).size;
    const fixed = await readUpTo(input, Buffer.alloc(FIXED_HEADER), FIXED_HEADER);
    if (fixed.length < FIXED_HEADER || fixed[0] !== FORMAT) {
      throw new EnvelopeFormatError('not a sealbox envelope file');
    }
    const segmentBytes = fixed.readUInt32BE(1);
    if (segmentBytes < MIN_SEGMENT_BYTES || segmentBytes > MAX_SEGMENT_BYTES ||
        (segmentBytes & (segmentBytes - 1)) !== 0) {
      throw new EnvelopeFormatError(`not a sealbox envelope file (segment size ${segmentBytes})`);
    }
    const sealedLength = fixed.readUInt16BE(12);
    if (sealedLength < MIN_SEALED_KEY || sealedLength > MAX_SEALED_KEY) {
      throw new EnvelopeFormatError(`not a sealbox envelope file (sealed key of ${sealedLength} bytes)`);
    }
    const sealedKey = Buffer.from(await readUpTo(input, Buffer.alloc(sealedLength), sealedLength));
    if (sealedKey.length < sealedLength) {
      throw new EnvelopeFormatError('not a sealbox envelope file (its header is cut short)');
    }
    const prefix = Buffer.from(fixed.subarray(5, 12));
    const aad = Buffer.from(fixed.subarray(0, 12));
    const opened = await client.open(key, sealedKey, {
      associatedData: options.associatedData, timeoutMs: options.timeoutMs,
    });
    const secret = opened.plaintext;
    try {
      if (secret.length !== DATA_KEY_BYTES) {
        throw new EnvelopeFormatError('not a sealbox envelope file (its sealed key is not a data key)');
      }
      const headerBytes = FIXED_HEADER + sealedLength;
      let counts = { read: 0, written: 0 };
      await writeAtomically(outPath, async (write) => {
        // S + 16 bytes are a full segment, never the last; fewer, at the end, are.
        counts = await eachSegment(input, write, segmentBytes + TAG_BYTES, (segment, index, last) => {
          if (segment.length < TAG_BYTES) throw decryptionFailed();
          const decipher = crypto.createDecipheriv('aes-256-gcm', secret, nonce(prefix, index, last),
            { authTagLength: TAG_BYTES });
          decipher.setAAD(aad);
          decipher.setAuthTag(segment.subarray(segment.length - TAG_BYTES));
          try {
            return Buffer.concat([decipher.update(segment.subarray(0, -TAG_BYTES)), decipher.final()]);
          } catch {
            throw decryptionFailed();
          }
        }, (read) => options.onProgress && options.onProgress(headerBytes + read, total));
      });
      return { keyVersion: opened.keyVersion, bytesRead: headerBytes + counts.read,
        bytesWritten: counts.written };
    } finally {
      secret.fill(0);
    }
  } finally {
    await input.close();
  }
}

module.exports = {
  SEGMENT_BYTES, sealEnvelopeFile, openEnvelopeFile,
  // The format's numbers, for the contract test (client/contract/contract.json).
  FORMAT, MIN_SEGMENT_BYTES, MAX_SEGMENT_BYTES, MIN_SEALED_KEY, MAX_SEALED_KEY, DATA_KEY_BYTES,
  TAG_BYTES, FIXED_HEADER,
};
