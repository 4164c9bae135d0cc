// The errors the library throws: one base class carrying the gRPC code and the
// server's message, and a class per case a program acts on differently
// (docs/CLIENTS.md, "Errors"). A gRPC failure becomes one of these in one place,
// fromGrpcError(); a failed decryption is recognized from the status details, never
// from the message text.
'use strict';

const { decryptionFailed } = require('./status_details');

/** gRPC status code names, indexed by code. */
const CODE_NAMES = [
  'OK', 'CANCELLED', 'UNKNOWN', 'INVALID_ARGUMENT', 'DEADLINE_EXCEEDED', 'NOT_FOUND',
  'ALREADY_EXISTS', 'PERMISSION_DENIED', 'RESOURCE_EXHAUSTED', 'FAILED_PRECONDITION',
  'ABORTED', 'OUT_OF_RANGE', 'UNIMPLEMENTED', 'INTERNAL', 'UNAVAILABLE', 'DATA_LOSS',
  'UNAUTHENTICATED',
];

/**
 * Every error sealbox reports: a gRPC status code (`code`, and its name in `codeName`)
 * and the server's message. Subclasses name the cases a program acts on differently;
 * other codes (INTERNAL, CANCELLED, ...) arrive as a plain SealboxError.
 */
class SealboxError extends Error {
  /**
   * @param {number} code the gRPC status code
   * @param {string} message what went wrong (the server's message for a failed call)
   * @param {{requestId?: string, cause?: unknown}} [options]
   */
  constructor(code, message, options = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    /** @type {number} */
    this.code = code;
    /** @type {string} */
    this.codeName = CODE_NAMES[code] || String(code);
    /** The server's request id (trailer `sealbox-request-id`), when it sent one. */
    this.requestId = options.requestId;
  }
}

/** A ciphertext that does not authenticate: wrong key or associated data, changed or
 * truncated. Never retried: each one counts against the key's failure limit. */
class DecryptionFailedError extends SealboxError {}
/** An answer whose bytes do not match its CRC32C, or that does not confirm the
 * request's checksums were checked. Code DATA_LOSS; nothing is returned. */
class ChecksumError extends SealboxError {
  /** @param {string} message @param {number} [code] */
  constructor(message, code = 15) {
    super(code, message);
  }
}
/** No token, or an unknown, revoked or expired one. */
class UnauthenticatedError extends SealboxError {}
/** Outside the token's scope, or the admin token was sent. */
class PermissionDeniedError extends SealboxError {}
/** No such key. */
class NotFoundError extends SealboxError {}
/** A malformed request (a failed decryption is DecryptionFailedError instead). */
class InvalidArgumentError extends SealboxError {}
/** The key or version is disabled, or a token that cannot renew. */
class FailedPreconditionError extends SealboxError {}
/** Too many failed authentications from this address, or a message too large. */
class ResourceExhaustedError extends SealboxError {}
/** The server is starting, stopping, unreachable, or its keystore is stale: try
 * again. The calls that are safe to repeat were already retried. */
class UnavailableError extends SealboxError {}
/** The call's deadline passed (across every attempt of a retried call). */
class DeadlineExceededError extends SealboxError {}
/** Not an envelope file, or a damaged header (code INVALID_ARGUMENT). */
class EnvelopeFormatError extends SealboxError {
  /** @param {string} message */
  constructor(message) {
    super(3, message);
  }
}

const CLASS_BY_CODE = new Map([
  [3, InvalidArgumentError], [4, DeadlineExceededError], [5, NotFoundError],
  [7, PermissionDeniedError], [8, ResourceExhaustedError], [9, FailedPreconditionError],
  [14, UnavailableError], [16, UnauthenticatedError],
]);

/**
 * The error for a status: DecryptionFailedError when `decryptionFailure` says so,
 * else the class of `code`.
 * @param {number} code @param {string} message @param {boolean} decryptionFailure
 * @param {{requestId?: string, cause?: unknown}} [options]
 * @returns {SealboxError}
 */
function errorFromStatus(code, message, decryptionFailure, options) {
  const Type = decryptionFailure ? DecryptionFailedError : (CLASS_BY_CODE.get(code) || SealboxError);
  return new Type(code, message, options);
}

/**
 * A grpc-js error (a ServiceError with code, details and trailers) as a SealboxError;
 * anything else (a file that cannot be read, ...) is returned unchanged.
 * @param {any} err
 * @returns {any}
 */
function fromGrpcError(err) {
  if (err instanceof SealboxError || !err || typeof err.code !== 'number') return err;
  const first = (name) => {
    const values = err.metadata && typeof err.metadata.get === 'function' ? err.metadata.get(name) : [];
    return values.length > 0 ? values[0] : undefined;
  };
  const details = first('grpc-status-details-bin');
  const requestId = first('sealbox-request-id');
  return errorFromStatus(err.code, err.details || err.message,
    Buffer.isBuffer(details) && decryptionFailed(details),
    { requestId: requestId === undefined ? undefined : String(requestId), cause: err });
}

module.exports = {
  CODE_NAMES,
  SealboxError,
  DecryptionFailedError,
  ChecksumError,
  UnauthenticatedError,
  PermissionDeniedError,
  NotFoundError,
  InvalidArgumentError,
  FailedPreconditionError,
  ResourceExhaustedError,
  UnavailableError,
  DeadlineExceededError,
  EnvelopeFormatError,
  errorFromStatus,
  fromGrpcError,
};
