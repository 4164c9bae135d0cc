// Client: one gRPC channel to a sealbox server and every call of docs/CLIENTS.md.
// Unary and batch calls carry CRC32C both ways and are retried on UNAVAILABLE within
// one deadline; streams and files go through streams.js; envelope files through
// envelope.js; the token is renewed before it runs out when asked.
'use strict';

const fsp = require('node:fs/promises');

const { checksum, verify } = require('./checksums');
const envelope = require('./envelope');
const {
  ChecksumError, FailedPreconditionError, SealboxError, errorFromStatus, fromGrpcError,
} = require('./errors');
const { writeAtomically, fileInput } = require('./files');
const { retryPolicy, withRetries } = require('./retry');
const { streamCall, toBuffer } = require('./streams');
const { channelFor, cryptoService } = require('./transport');

const DEFAULT_TIMEOUT_MS = 30000;
const EMPTY = Buffer.alloc(0);

/** @param {unknown} value @param {string} what */
function bytesOrEmpty(value, what) {
  return value === undefined || value === null ? EMPTY : toBuffer(value, what);
}

/** A request's key, payload and associated data, with their CRC32Cs. */
function checkedRequest(key, field, payload, associatedData) {
  const data = toBuffer(payload, field);
  const ad = bytesOrEmpty(associatedData, 'associatedData');
  return {
    key, [field]: data, associated_data: ad,
    [`${field}_crc32c`]: checksum(data), associated_data_crc32c: checksum(ad),
  };
}

/** The SealboxError of a batch item's ItemError. */
function itemError(error) {
  return errorFromStatus(error.code, error.message, error.reason === 'DECRYPTION_FAILED');
}

const SEALED = {
  check: (method, r) => verify(method, r, ['ciphertext'],
    ['verified_plaintext_crc32c', 'verified_associated_data_crc32c']),
  result: (r) => ({ ciphertext: r.ciphertext, keyVersion: r.key_version }),
};
const OPENED = {
  check: (method, r) => verify(method, r, ['plaintext'],
    ['verified_ciphertext_crc32c', 'verified_associated_data_crc32c']),
  result: (r) => ({ plaintext: r.plaintext, keyVersion: r.key_version }),
};
const REWRAPPED = {
  check: (method, r) => verify(method, r, ['ciphertext'],
    ['verified_ciphertext_crc32c', 'verified_associated_data_crc32c']),
  result: (r) => ({
    ciphertext: r.ciphertext, keyVersion: r.key_version, previousKeyVersion: r.previous_key_version,
  }),
};

/**
 * A sealbox client: one gRPC channel, shared by every call made through it (safe to
 * use from any number of concurrent async callers). Close it with close().
 */
class Client {
  #grpc;
  #stub;
  #token;
  #timeoutMs;
  #retry;
  #renewal;

  /**
   * @param {string} address HOST:PORT, [IPV6]:PORT or unix:PATH
   * @param {import('../index').ClientOptions} [options]
   */
  constructor(address, options = {}) {
    if (typeof address !== 'string' || address === '') throw new TypeError('address must be HOST:PORT');
    const grpc = require('@grpc/grpc-js');
    const Crypto = cryptoService(grpc, require('@grpc/proto-loader'));
    const { credentials, channelOptions } = channelFor(grpc, address, options);
    this.#stub = new Crypto(address, credentials, channelOptions);
    this.#grpc = grpc;
    this.#token = options.token;
    this.#timeoutMs = options.timeoutMs === undefined ? DEFAULT_TIMEOUT_MS : options.timeoutMs;
    this.#retry = retryPolicy(options.retry);
    const renewal = options.tokenRenewal;
    if (renewal) {
      const settings = renewal === true ? {} : renewal;
      const expiresAt = settings.expiresAt === undefined ? null : new Date(settings.expiresAt).getTime();
      this.#renewal = {
        expiresAt, lifeMs: expiresAt === null ? null : expiresAt - Date.now(),
        onRenewed: settings.onRenewed, onError: settings.onError, inFlight: null, stopped: false,
      };
    } else {
      this.#renewal = { expiresAt: null, lifeMs: null, onRenewed: undefined, onError: undefined,
        inFlight: null, stopped: true };
    }
  }

  /** The token calls are made with now (a successor once one was issued). */
  get token() {
    return this.#token;
  }

  /** Closes the channel; calls in flight fail. */
  close() {
    this.#stub.close();
  }

  #metadata() {
    const metadata = new this.#grpc.Metadata();
    if (this.#token) metadata.set('authorization', `Bearer ${this.#token}`);
    return metadata;
  }

  /** The absolute deadline of a call: its timeoutMs, else the default (or none). */
  #deadline(options, fallbackMs) {
    const ms = options && options.timeoutMs !== undefined ? options.timeoutMs : fallbackMs;
    return ms === undefined || ms === null || ms === Infinity ? undefined : Date.now() + ms;
  }

  /** Renews the token first when less than a third of its life is left (or its
   * expiry is unknown). A failed renewal leaves the old token in use. */
  async #renewIfDue() {
    const renewal = this.#renewal;
    if (renewal.stopped) return;
    if (renewal.expiresAt !== null && renewal.expiresAt - Date.now() >= renewal.lifeMs / 3) return;
    if (!renewal.inFlight) {
      renewal.inFlight = this.renewToken().catch((err) => {
        // A token that does not expire (or cannot be renewed further) will not renew
        // later either: stop asking. Anything else is tried again at the next call.
        if (err instanceof FailedPreconditionError) renewal.stopped = true;
        if (renewal.onError) renewal.onError(err);
      }).finally(() => {
        renewal.inFlight = null;
      });
    }
    await renewal.inFlight;
  }

  /**
   * A unary call: renewal first, then attempts within one deadline.
   * @param {string} method @param {object} request
   * @param {{timeoutMs?: number}} [options]
   * @param {{retry?: boolean, renew?: boolean}} [how]
   */
  async #unary(method, request, options, how = {}) {
    if (how.renew !== false) await this.#renewIfDue();
    const deadline = this.#deadline(options, this.#timeoutMs);
    const once = () => new Promise((resolve, reject) => {
      this.#stub[method](request, this.#metadata(), deadline === undefined ? {} : { deadline },
        (err, response) => (err ? reject(fromGrpcError(err)) : resolve(response)));
    });
    return how.retry === false ? once() : withRetries(this.#retry, deadline, once);
  }

  /**
   * For tests only: a unary call with the request as given (no checksums added).
   * @param {string} method @param {object} request @param {{timeoutMs?: number}} [options]
   */
  _rawUnary(method, request, options) {
    return this.#unary(method, request, options);
  }

  /**
   * Seals `plaintext` under the key's primary version.
   * @param {string} key
   * @param {string | Uint8Array} plaintext
   * @param {{associatedData?: string | Uint8Array, timeoutMs?: number}} [options]
   * @returns {Promise<{ciphertext: Buffer, keyVersion: number}>}
   */
  async seal(key, plaintext, options = {}) {
    const response = await this.#unary('Seal',
      checkedRequest(key, 'plaintext', plaintext, options.associatedData), options);
    SEALED.check('Seal', response);
    return SEALED.result(response);
  }

  /**
   * Opens a ciphertext from seal() or rewrap().
   * @param {string} key
   * @param {Uint8Array} ciphertext
   * @param {{associatedData?: string | Uint8Array, timeoutMs?: number}} [options]
   * @returns {Promise<{plaintext: Buffer, keyVersion: number}>}
   */
  async open(key, ciphertext, options = {}) {
    const response = await this.#unary('Open',
      checkedRequest(key, 'ciphertext', ciphertext, options.associatedData), options);
    OPENED.check('Open', response);
    return OPENED.result(response);
  }

  /**
   * Re-seals a ciphertext under the key's primary version, without the plaintext
   * leaving the server.
   * @param {string} key
   * @param {Uint8Array} ciphertext
   * @param {{associatedData?: string | Uint8Array, timeoutMs?: number}} [options]
   * @returns {Promise<{ciphertext: Buffer, keyVersion: number, previousKeyVersion: number}>}
   */
  async rewrap(key, ciphertext, options = {}) {
    const response = await this.#unary('Rewrap',
      checkedRequest(key, 'ciphertext', ciphertext, options.associatedData), options);
    REWRAPPED.check('Rewrap', response);
    return REWRAPPED.result(response);
  }

  /** A batch call: one request per item, one result (or error) per item, in order. */
  async #batch(method, field, kind, resultField, items, options) {
    if (!Array.isArray(items)) throw new TypeError(`${method}: items must be an array`);
    const request = {
      items: items.map((item) => checkedRequest(item.key, field, item[field], item.associatedData)),
    };
    const response = await this.#unary(method, request, options);
    if (response.results.length !== items.length) {
      throw new SealboxError(13, `${method}: ${response.results.length} results for ${items.length} items`);
    }
    // Check every answer first: a corrupted one means none is returned.
    for (const result of response.results) {
      if (result.result === resultField) kind.check(method, result[resultField]);
    }
    return response.results.map((result) => (result.result === resultField
      ? { ok: true, result: kind.result(result[resultField]) }
      : { ok: false, error: itemError(result.error) }));
  }

  /**
   * Seals many small messages in one call; each item gets its own result or error.
   * @param {Array<{key: string, plaintext: string | Uint8Array, associatedData?: string | Uint8Array}>} items
   * @param {{timeoutMs?: number}} [options]
   */
  sealBatch(items, options = {}) {
    return this.#batch('SealBatch', 'plaintext', SEALED, 'sealed', items, options);
  }

  /**
   * Opens many ciphertexts in one call; each item gets its own result or error (a
   * failed one a DecryptionFailedError).
   * @param {Array<{key: string, ciphertext: Uint8Array, associatedData?: string | Uint8Array}>} items
   * @param {{timeoutMs?: number}} [options]
   */
  openBatch(items, options = {}) {
    return this.#batch('OpenBatch', 'ciphertext', OPENED, 'opened', items, options);
  }

  /**
   * Rewraps many ciphertexts in one call; each item gets its own result or error.
   * @param {Array<{key: string, ciphertext: Uint8Array, associatedData?: string | Uint8Array}>} items
   * @param {{timeoutMs?: number}} [options]
   */
  rewrapBatch(items, options = {}) {
    return this.#batch('RewrapBatch', 'ciphertext', REWRAPPED, 'rewrapped', items, options);
  }

  /**
   * A fresh data key, sealed under `key` (and in plaintext with includePlaintext).
   * @param {string} key
   * @param {{associatedData?: string | Uint8Array, bytes?: 16 | 32, includePlaintext?: boolean,
   *          timeoutMs?: number}} [options]
   * @returns {Promise<{plaintext: Buffer | null, ciphertext: Buffer, keyVersion: number}>}
   */
  async generateDataKey(key, options = {}) {
    const ad = bytesOrEmpty(options.associatedData, 'associatedData');
    const response = await this.#unary('GenerateDataKey', {
      key, data_key_bytes: options.bytes || 0, associated_data: ad,
      include_plaintext: Boolean(options.includePlaintext), associated_data_crc32c: checksum(ad),
    }, options);
    verify('GenerateDataKey', response, ['plaintext', 'ciphertext'], ['verified_associated_data_crc32c']);
    if (Boolean(options.includePlaintext) !== response.plaintext.length > 0) {
      throw new ChecksumError('GenerateDataKey: the answer does not match include_plaintext');
    }
    return {
      plaintext: options.includePlaintext ? response.plaintext : null,
      ciphertext: response.ciphertext, keyVersion: response.key_version,
    };
  }

  /**
   * Asks for a successor to the current token and uses it for every later call.
   * Never retried: each call mints a token.
   * @param {{ttlSeconds?: number, timeoutMs?: number}} [options]
   * @returns {Promise<{token: string, tokenId: string, expiresAt: Date}>}
   */
  async renewToken(options = {}) {
    const request = options.ttlSeconds ? { ttl: { seconds: Math.round(options.ttlSeconds), nanos: 0 } } : {};
    const response = await this.#unary('RenewToken', request, options, { retry: false, renew: false });
    const expire = response.expire_time || { seconds: 0, nanos: 0 };
    const expiresAt = new Date(Number(expire.seconds) * 1000 + Math.floor(expire.nanos / 1e6));
    this.#token = response.token;
    const renewal = this.#renewal;
    renewal.expiresAt = expiresAt.getTime();
    renewal.lifeMs = Math.max(renewal.expiresAt - Date.now(), 0);
    if (renewal.onRenewed) renewal.onRenewed(response.token, expiresAt);
    return { token: response.token, tokenId: response.token_id, expiresAt };
  }

  /** A stream call's answer messages, with renewal first and retries before the first. */
  async* #stream(method, inField, key, input, options) {
    await this.#renewIfDue();
    const deadline = this.#deadline(options, undefined);
    const start = {
      key, associated_data: bytesOrEmpty(options.associatedData, 'associatedData'),
      segment_size: options.segmentSize || 0,
    };
    yield* streamCall({
      policy: this.#retry, deadline, start, inField, input,
      openCall: () => this.#stub[method](this.#metadata(), deadline === undefined ? {} : { deadline }),
      onSent: options.onSent, onAttempt: options.onAttempt,
    });
  }

  /**
   * Seals a stream of any length: yields the stream ciphertext's chunks as segments
   * complete. It is complete only if the iteration ends without an error.
   * @param {string} key
   * @param {import('../index').StreamInput} input
   * @param {import('../index').StreamOptions} [options]
   * @returns {AsyncGenerator<Buffer, void, undefined>}
   */
  async* sealStream(key, input, options = {}) {
    for await (const message of this.#stream('SealStream', 'plaintext_chunk', key, input, options)) {
      yield message.ciphertext_chunk;
    }
  }

  /**
   * Opens a stream ciphertext from sealStream: yields plaintext one verified segment
   * at a time. Only an iteration that ends without an error verified the whole
   * stream: on an error, discard every chunk received.
   * @param {string} key
   * @param {import('../index').StreamInput} input
   * @param {import('../index').StreamOptions} [options]
   * @returns {AsyncGenerator<Buffer, void, undefined>}
   */
  async* openStream(key, input, options = {}) {
    for await (const message of this.#stream('OpenStream', 'ciphertext_chunk', key, input, options)) {
      yield message.plaintext_chunk;
    }
  }

  /** A file through a stream call into a file written whole or not at all. */
  async #file(method, inField, outField, key, inPath, outPath, options) {
    const total = (await fsp.stat(inPath)).size;
    let sent = 0;
    let keyVersion = 0;
    let written = 0;
    const streamOptions = {
      associatedData: options.associatedData, segmentSize: options.segmentSize,
      timeoutMs: options.timeoutMs,
      onSent: (bytes) => {
        sent += bytes;
        if (options.onProgress) options.onProgress(sent, total);
      },
      onAttempt: () => { sent = 0; },
    };
    await writeAtomically(outPath, async (write) => {
      for await (const message of this.#stream(method, inField, key, fileInput(inPath), streamOptions)) {
        keyVersion = message.key_version;
        await write(message[outField]);
        written += message[outField].length;
      }
    });
    return { keyVersion, bytesRead: sent, bytesWritten: written };
  }

  /**
   * Seals the file `inPath` through SealStream into `outPath`, written beside it
   * under a temporary name and renamed only when complete.
   * @param {string} key @param {string} inPath @param {string} outPath
   * @param {import('../index').FileOptions} [options]
   * @returns {Promise<import('../index').FileResult>}
   */
  sealFile(key, inPath, outPath, options = {}) {
    return this.#file('SealStream', 'plaintext_chunk', 'ciphertext_chunk', key, inPath, outPath, options);
  }

  /**
   * Opens the stream ciphertext file `inPath` through OpenStream into `outPath`,
   * renamed into place only once every segment verified.
   * @param {string} key @param {string} inPath @param {string} outPath
   * @param {import('../index').FileOptions} [options]
   * @returns {Promise<import('../index').FileResult>}
   */
  openFile(key, inPath, outPath, options = {}) {
    return this.#file('OpenStream', 'ciphertext_chunk', 'plaintext_chunk', key, inPath, outPath, options);
  }

  /**
   * Seals `inPath` into the envelope file `outPath` (docs/FORMAT.md, 0x03): a data
   * key from GenerateDataKey encrypts it here, in 1 MiB segments.
   * @param {string} key @param {string} inPath @param {string} outPath
   * @param {import('../index').EnvelopeOptions} [options]
   * @returns {Promise<import('../index').FileResult>}
   */
  sealEnvelopeFile(key, inPath, outPath, options = {}) {
    return envelope.sealEnvelopeFile(this, key, inPath, outPath, options);
  }

  /**
   * Opens the envelope file `inPath` into `outPath`, renamed into place only once
   * every segment verified.
   * @param {string} key @param {string} inPath @param {string} outPath
   * @param {import('../index').EnvelopeOptions} [options]
   * @returns {Promise<import('../index').FileResult>}
   */
  openEnvelopeFile(key, inPath, outPath, options = {}) {
    return envelope.openEnvelopeFile(this, key, inPath, outPath, options);
  }
}

module.exports = { Client, DEFAULT_TIMEOUT_MS };
