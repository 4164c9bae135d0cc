// sealbox's Node.js client library: the Client and the errors it throws
// (docs/clients/NODE.md; the contract every sealbox library keeps: docs/CLIENTS.md).
'use strict';

const { Client } = require('./client');
const { crc32c } = require('./checksums');
const errors = require('./errors');

module.exports = {
  Client,
  crc32c,
  SealboxError: errors.SealboxError,
  DecryptionFailedError: errors.DecryptionFailedError,
  ChecksumError: errors.ChecksumError,
  UnauthenticatedError: errors.UnauthenticatedError,
  PermissionDeniedError: errors.PermissionDeniedError,
  NotFoundError: errors.NotFoundError,
  InvalidArgumentError: errors.InvalidArgumentError,
  FailedPreconditionError: errors.FailedPreconditionError,
  ResourceExhaustedError: errors.ResourceExhaustedError,
  UnavailableError: errors.UnavailableError,
  DeadlineExceededError: errors.DeadlineExceededError,
  EnvelopeFormatError: errors.EnvelopeFormatError,
};
