// SealStream and OpenStream over the caller's chunks (docs/CLIENTS.md): the input is
// sent as the server and the network accept it (each write waits for 'drain' once
// grpc-js's buffer is full) while the answers are handed out as the caller asks for
// them (grpc-js reads the next message only then), so memory stays bounded whatever
// the length. A call is retried on UNAVAILABLE only before its first answer and only
// when its input can be read again (bytes, a file, a function giving a fresh iterable).
'use strict';

const { fromGrpcError, errorFromStatus } = require('./errors');
const { withRetries, isRetryable } = require('./retry');

// Input bytes per message: well under the server's 4 MiB, and small enough that
// grpc-js's write buffer (16 messages) stays a few MiB.
const CHUNK_BYTES = 256 << 10;

/**
 * Bytes from a Buffer, Uint8Array or string (UTF-8).
 * @param {unknown} value @param {string} what
 * @returns {Buffer}
 */
function toBuffer(value, what) {
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  throw new TypeError(`${what} must be a Buffer, Uint8Array or string`);
}

/**
 * The input of a stream call, normalized: `open()` gives an iterable of chunks; it
 * may be called again (for a retry) only when `rereadable`.
 * @param {unknown} input
 * @returns {{rereadable: boolean, open: () => AsyncIterable<unknown> | Iterable<unknown>}}
 */
function streamSource(input) {
  if (Buffer.isBuffer(input) || input instanceof Uint8Array || typeof input === 'string') {
    const bytes = toBuffer(input, 'input');
    return { rereadable: true, open: () => [bytes] };
  }
  if (typeof input === 'function') return { rereadable: true, open: /** @type {any} */ (input) };
  if (input && (typeof input[Symbol.asyncIterator] === 'function' ||
                typeof input[Symbol.iterator] === 'function')) {
    return { rereadable: false, open: () => /** @type {any} */ (input) };
  }
  throw new TypeError('a stream input must be bytes, an (async) iterable of chunks, a ' +
                      'Node.js Readable, or a function returning one of those');
}

/**
 * Resolves once `call` can take more writes, or has ended.
 * @param {any} call @param {{ended: boolean}} state
 */
function writable(call, state) {
  return new Promise((resolve) => {
    const done = () => {
      call.off('drain', done);
      call.off('status', done);
      resolve(undefined);
    };
    if (state.ended) return resolve(undefined);
    call.on('drain', done);
    call.on('status', done);
  });
}

/**
 * One attempt: opens the call, sends `start` then `chunks` as `inField` messages and
 * half-closes, and yields each answer message. Ends normally only if the call ended
 * with OK; otherwise throws its SealboxError (or the input's own error).
 * @param {() => any} openCall
 * @param {Record<string, unknown>} start
 * @param {string} inField
 * @param {AsyncIterable<unknown> | Iterable<unknown>} chunks
 * @param {((bytes: number) => void) | undefined} onSent
 */
async function* attempt(openCall, start, inField, chunks, onSent) {
  const call = openCall();
  const state = { ended: false };
  let inputError = null;
  const status = new Promise((resolve) => {
    call.on('status', (s) => {
      state.ended = true;
      resolve(s);
    });
  });
  call.on('error', () => {}); // read from the iteration and the status below

  const send = async (bytes) => {
    if (!call.write({ [inField]: bytes })) await writable(call, state);
    if (onSent) onSent(bytes.length);
  };
  const pump = (async () => {
    call.write({ start });
    // Small chunks are gathered into messages of CHUNK_BYTES (the server answers a
    // segment at a time anyway); what is held back is copied, as a source may reuse
    // its buffers once it has handed them over.
    let held = [];
    let heldBytes = 0;
    for await (const chunk of chunks) {
      const bytes = toBuffer(chunk, 'a stream chunk');
      if (heldBytes + bytes.length < CHUNK_BYTES) {
        held.push(Buffer.from(bytes));
        heldBytes += bytes.length;
        continue;
      }
      const all = heldBytes > 0 ? Buffer.concat([...held, bytes]) : bytes;
      let offset = 0;
      for (; all.length - offset >= CHUNK_BYTES; offset += CHUNK_BYTES) {
        if (state.ended) return;
        await send(all.subarray(offset, offset + CHUNK_BYTES));
      }
      held = offset < all.length ? [Buffer.from(all.subarray(offset))] : [];
      heldBytes = all.length - offset;
    }
    if (heldBytes > 0 && !state.ended) await send(Buffer.concat(held));
    if (!state.ended) call.end();
  })().catch((err) => {
    inputError = err;
    call.cancel();
  });

  try {
    try {
      for await (const message of call) yield message;
    } catch (err) {
      if (inputError) throw inputError;
      throw fromGrpcError(err);
    }
    const ended = await status;
    await pump;
    if (inputError) throw inputError;
    if (ended.code !== 0) throw errorFromStatus(ended.code, ended.details, false);
  } finally {
    state.ended = true;
    call.cancel(); // a no-op once the call ended; stops it if the caller stopped early
  }
}

/**
 * A stream call with its retries: yields every answer message of the attempt that
 * succeeded.
 * @param {{policy: any, openCall: () => any, start: Record<string, unknown>,
 *          inField: string, input: unknown, deadline?: number,
 *          onSent?: (bytes: number) => void, onAttempt?: () => void}} spec
 */
async function* streamCall(spec) {
  const source = streamSource(spec.input);
  let answers = null;
  // Attempts run until one gives its first answer (or ends): only before that point
  // is a retry safe. The rest of that attempt is then read without retries.
  let next = await withRetries(spec.policy, spec.deadline, async (n) => {
    if (n > 1 && spec.onAttempt) spec.onAttempt();
    answers = attempt(spec.openCall, spec.start, spec.inField, source.open(), spec.onSent);
    return answers.next();
  }, (err) => source.rereadable && isRetryable(err));
  try {
    while (!next.done) {
      yield next.value;
      next = await answers.next();
    }
  } finally {
    if (!next.done) await answers.return(undefined);
  }
}

module.exports = { CHUNK_BYTES, toBuffer, streamSource, streamCall };
