// The channel: plaintext to loopback, TLS to anything else (system roots or a CA, a
// client certificate for mTLS, a server name override), plaintext to another host
// only when asked (`insecure`), as the sealbox CLI does; and the service definition,
// loaded from the package's copy of data.proto.
'use strict';

const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');

// A copy of proto/sealbox/v1/data.proto, so the installed package stands alone; the
// tests fail if it differs from the repository's.
const PROTO_DIR = path.join(__dirname, '..', 'proto');
// Answers are at most a unary ciphertext or a stream chunk; leave room above both.
const MAX_RECEIVE_BYTES = 32 << 20;

/**
 * Whether `address` (HOST:PORT, [IPV6]:PORT or unix:PATH) is on this machine.
 * @param {string} address
 */
function isLoopback(address) {
  if (address.startsWith('unix:')) return true;
  const colon = address.lastIndexOf(':');
  let host = (colon > 0 ? address.slice(0, colon) : address).toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (net.isIPv4(host)) return host.startsWith('127.');
  if (net.isIPv6(host)) return host === '::1' || /^::ffff:127\./.test(host);
  return false;
}

/**
 * PEM bytes from an inline value or a file, or null for neither.
 * @param {string} what @param {string | Buffer | undefined} inline
 * @param {string | undefined} file
 */
function pem(what, inline, file) {
  if (inline !== undefined && inline !== null) return Buffer.from(inline);
  if (file === undefined || file === null) return null;
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw new Error(`tls.${what}File: cannot read ${file}: ${err.message}`);
  }
}

/**
 * The channel credentials and options for `address`.
 * @param {typeof import('@grpc/grpc-js')} grpc
 * @param {string} address
 * @param {{tls?: Record<string, any>, insecure?: boolean,
 *          channelOptions?: Record<string, string | number>}} options
 */
function channelFor(grpc, address, options) {
  const tls = options.tls;
  const channelOptions = {
    'grpc.max_receive_message_length': MAX_RECEIVE_BYTES,
    'grpc.primary_user_agent': 'sealbox-node',
    // Reconnect at least once a second (gRPC's default backoff grows to two minutes),
    // so a retried call meets a fresh connection attempt rather than a channel still
    // backing off.
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 1000,
  };
  let credentials;
  if (!tls && (options.insecure || isLoopback(address))) {
    credentials = grpc.credentials.createInsecure();
  } else {
    const settings = tls || {};
    const cert = pem('cert', settings.cert, settings.certFile);
    const key = pem('key', settings.key, settings.keyFile);
    if (Boolean(cert) !== Boolean(key)) throw new TypeError('tls: a client cert needs its key, and a key its cert');
    credentials = grpc.credentials.createSsl(pem('ca', settings.ca, settings.caFile), key, cert);
    if (settings.serverName) {
      channelOptions['grpc.ssl_target_name_override'] = settings.serverName;
      channelOptions['grpc.default_authority'] = settings.serverName;
    }
  }
  return { credentials, channelOptions: { ...channelOptions, ...(options.channelOptions || {}) } };
}

/**
 * The sealbox.v1.Crypto client constructor: messages keep their .proto field names,
 * bytes are Buffers, enums strings, oneofs name their set field.
 * @param {typeof import('@grpc/grpc-js')} grpc
 * @param {typeof import('@grpc/proto-loader')} protoLoader
 */
function cryptoService(grpc, protoLoader) {
  const definition = protoLoader.loadSync('sealbox/v1/data.proto', {
    includeDirs: [PROTO_DIR], keepCase: true, longs: Number, enums: String,
    defaults: true, oneofs: true,
  });
  return grpc.loadPackageDefinition(definition).sealbox.v1.Crypto;
}

module.exports = { PROTO_DIR, isLoopback, channelFor, cryptoService };
