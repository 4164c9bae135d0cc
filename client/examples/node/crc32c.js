// CRC32C checksums for sealbox's data-plane calls (docs/FORMAT.md, "Checksums").
//
// A request carries the CRC32C of the bytes it sends (the server refuses it with
// INVALID_ARGUMENT "checksum mismatch" if they arrived different) and a response the
// CRC32C of the bytes it returns, which verify() checks here. A plain table, a byte at
// a time: the examples only checksum unary payloads, and this needs no npm package.
'use strict';

// Castagnoli's polynomial, reflected (iSCSI, RFC 3720).
const TABLE = new Uint32Array(256);
for (let n = 0; n < 256; n++) {
  let crc = n;
  for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  TABLE[n] = crc;
}

// The CRC32C of a Buffer or Uint8Array, as an unsigned number:
// Buffer.from('123456789') gives 0xe3069283.
function crc32c(bytes) {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

// The value of a request's *_crc32c field (a google.protobuf.UInt32Value).
function checksum(bytes) {
  return { value: crc32c(bytes) };
}

class ChecksumError extends Error {}

// Checks each of `fields` of `response` ('ciphertext', ...) against its FIELD_crc32c,
// and that each `verified` flag ('verified_plaintext_crc32c', ...) is set.
function verify(method, response, fields, verified) {
  for (const field of fields) {
    if (crc32c(response[field]) !== response[`${field}_crc32c`]) {
      throw new ChecksumError(`${method}: the response's ${field} does not match its ` +
                              `${field}_crc32c (corrupted on the way?)`);
    }
  }
  for (const flag of verified) {
    if (!response[flag]) {
      throw new ChecksumError(`${method}: the response's ${flag} is false: the server did ` +
                              'not check the checksum sent (an older server?)');
    }
  }
}

module.exports = { crc32c, checksum, verify, ChecksumError };
