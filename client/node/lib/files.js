// Writing a file whole or not at all: the output goes to a temporary file beside the
// target (same folder, so the rename cannot cross file systems), created 0600 since
// it may hold plaintext, flushed with fsync, and renamed over the target only when
// everything was written (for an opened file: only once every segment verified). On
// any failure the temporary file is removed and the target is left as it was.
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const fsp = require('node:fs/promises');
const path = require('node:path');

/**
 * Runs `produce(write)`, where `write(bytes)` appends to a temporary file beside
 * `target`; renames it to `target` once `produce` resolves.
 * @template T
 * @param {string} target
 * @param {(write: (bytes: Uint8Array) => Promise<void>) => Promise<T>} produce
 * @returns {Promise<T>}
 */
async function writeAtomically(target, produce) {
  const absolute = path.resolve(target);
  const dir = path.dirname(absolute);
  const temp = path.join(dir, `.${path.basename(absolute)}.${crypto.randomBytes(6).toString('hex')}.tmp`);
  const file = await fsp.open(temp, 'wx', 0o600);
  let closed = false;
  try {
    const result = await produce(async (bytes) => {
      for (let offset = 0; offset < bytes.length;) {
        const { bytesWritten } = await file.write(bytes, offset, bytes.length - offset);
        offset += bytesWritten;
      }
    });
    await file.sync();
    await file.close();
    closed = true;
    await fsp.rename(temp, absolute);
    await syncDirectory(dir);
    return result;
  } catch (err) {
    if (!closed) await file.close().catch(() => {});
    await fsp.unlink(temp).catch(() => {});
    throw err;
  }
}

/** fsync on a folder, so a rename in it survives a crash (where the OS allows it). */
async function syncDirectory(dir) {
  let handle;
  try {
    handle = await fsp.open(dir, fs.constants.O_RDONLY);
    await handle.sync();
  } catch {
    // Some file systems refuse fsync on a folder; the data itself is synced.
  } finally {
    if (handle) await handle.close();
  }
}

/**
 * A rereadable stream input for a file: a fresh read stream each time, in 1 MiB
 * chunks.
 * @param {string} file
 */
function fileInput(file) {
  return () => fs.createReadStream(file, { highWaterMark: 1 << 20 });
}

/**
 * Reads up to `length` bytes from `handle` into `buffer` (fewer only at the end of
 * the file): the bytes read.
 * @param {import('node:fs/promises').FileHandle} handle
 * @param {Buffer} buffer @param {number} length
 */
async function readUpTo(handle, buffer, length) {
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, null);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

module.exports = { writeAtomically, fileInput, readUpTo };
