// CRC32C (Castagnoli, as iSCSI and Cloud KMS use) on every unary and batch call
// (docs/FORMAT.md, "Checksums"): each request carries the CRC32C of the bytes it
// sends, and verify() checks each response's bytes against the CRC32C it carries and
// that the server says it checked ours.
'use strict';

const { ChecksumError } = require('./errors');

// The reflected polynomial, a table per byte: payloads here are at most the unary
// limit (1 MiB by default), a few milliseconds.
const TABLE = new Uint32Array(256);
for (let n = 0; n < 256; n++) {
  let crc = n;
  for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  TABLE[n] = crc;
}

/**
 * The CRC32C of `bytes` as an unsigned 32-bit number: crc32c(Buffer.from('123456789'))
 * is 0xe3069283.
 * @param {Uint8Array} bytes
 * @returns {number}
 */
function crc32c(bytes) {
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) crc = TABLE[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/**
 * A request's `*_crc32c` field (a google.protobuf.UInt32Value) for `bytes`.
 * @param {Uint8Array} bytes
 * @returns {{value: number}}
 */
function checksum(bytes) {
  return { value: crc32c(bytes) };
}

/**
 * Checks a response: each of `fields` ('ciphertext', ...) against its
 * `<field>_crc32c`, and that each of `confirmations` ('verified_plaintext_crc32c', ...)
 * is true. Throws ChecksumError otherwise.
 * @param {string} method the call, for the message
 * @param {Record<string, any>} response
 * @param {string[]} fields
 * @param {string[]} confirmations
 */
function verify(method, response, fields, confirmations) {
  for (const field of fields) {
    const bytes = response[field] || Buffer.alloc(0);
    if (crc32c(bytes) !== response[`${field}_crc32c`]) {
      throw new ChecksumError(`${method}: the answer's ${field} does not match its CRC32C ` +
                              '(corrupted on the way)');
    }
  }
  for (const flag of confirmations) {
    if (response[flag] !== true) {
      throw new ChecksumError(`${method}: the server did not confirm it checked the ` +
                              `request's checksum (${flag} is not set)`);
    }
  }
}

module.exports = { crc32c, checksum, verify };
