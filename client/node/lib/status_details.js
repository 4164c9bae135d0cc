// Reads the status details a failed call carries (trailer grpc-status-details-bin): a
// google.rpc.Status whose `details` are Any messages. sealbox marks a failed
// decryption with a google.rpc.ErrorInfo{domain: "sealbox.v1", reason:
// "DECRYPTION_FAILED"} there. A few lines of protobuf decoding, so no generated code
// or extra package is needed:
//
//   google.rpc.Status    { int32 code = 1; string message = 2; repeated Any details = 3; }
//   google.protobuf.Any  { string type_url = 1; bytes value = 2; }
//   google.rpc.ErrorInfo { string reason = 1; string domain = 2; map<..> metadata = 3; }
'use strict';

const ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo';
const DOMAIN = 'sealbox.v1';
const DECRYPTION_FAILED = 'DECRYPTION_FAILED';

/**
 * The fields of one protobuf message: [fieldNumber, value] pairs in order, a value
 * being a number (varint) or a Buffer (length-delimited); fixed-width fields are
 * skipped. Throws on malformed input.
 * @param {Buffer} bytes
 * @returns {Array<[number, number | Buffer]>}
 */
function readFields(bytes) {
  const fields = [];
  let offset = 0;
  const varint = () => {
    let value = 0;
    for (let shift = 0; shift < 64; shift += 7) {
      if (offset >= bytes.length) throw new Error('truncated varint');
      const byte = bytes[offset++];
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
    throw new Error('varint too long');
  };
  while (offset < bytes.length) {
    const tag = varint();
    const field = Math.floor(tag / 8);
    switch (tag % 8) {
      case 0: fields.push([field, varint()]); break;
      case 1: offset += 8; break;
      case 2: {
        const length = varint();
        if (offset + length > bytes.length) throw new Error('truncated field');
        fields.push([field, bytes.subarray(offset, offset + length)]);
        offset += length;
        break;
      }
      case 5: offset += 4; break;
      default: throw new Error(`unsupported wire type ${tag % 8}`);
    }
    if (offset > bytes.length) throw new Error('truncated field');
  }
  return fields;
}

/**
 * The ErrorInfo details of a serialized google.rpc.Status, as {domain, reason}.
 * @param {Buffer} statusBytes
 * @returns {Array<{domain: string, reason: string}>}
 */
function errorInfos(statusBytes) {
  const infos = [];
  for (const [field, any] of readFields(statusBytes)) {
    if (field !== 3 || !Buffer.isBuffer(any)) continue;
    let typeUrl = '';
    let value = Buffer.alloc(0);
    for (const [f, v] of readFields(any)) {
      if (f === 1 && Buffer.isBuffer(v)) typeUrl = v.toString('utf8');
      if (f === 2 && Buffer.isBuffer(v)) value = v;
    }
    if (typeUrl !== ERROR_INFO_TYPE) continue;
    const info = { domain: '', reason: '' };
    for (const [f, v] of readFields(value)) {
      if (f === 1 && Buffer.isBuffer(v)) info.reason = v.toString('utf8');
      if (f === 2 && Buffer.isBuffer(v)) info.domain = v.toString('utf8');
    }
    infos.push(info);
  }
  return infos;
}

/**
 * Whether serialized status details mark a failed decryption. Malformed details
 * mark nothing.
 * @param {Buffer} statusBytes
 * @returns {boolean}
 */
function decryptionFailed(statusBytes) {
  try {
    return errorInfos(statusBytes).some(
      (info) => info.domain === DOMAIN && info.reason === DECRYPTION_FAILED);
  } catch {
    return false;
  }
}

module.exports = { DOMAIN, ERROR_INFO_TYPE, readFields, errorInfos, decryptionFailed };
