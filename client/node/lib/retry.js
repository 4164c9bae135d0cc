// Retries (docs/CLIENTS.md, "Retries"): only UNAVAILABLE, when the server did nothing
// the caller could observe, with exponential backoff and full jitter (a random wait
// between 0 and min(max, initial * 2^n)), every attempt within the call's one
// deadline. Which calls may be retried is the caller's decision (`retryable`).
'use strict';

const { UnavailableError, DecryptionFailedError } = require('./errors');

/** The defaults (client/contract/contract.json's retryPolicy): 100 ms doubling to at
 * most 2 s, 8 attempts in all; up to about 7 s of waits, enough for a server's restart. */
const DEFAULT_POLICY = Object.freeze({ maxAttempts: 8, initialBackoffMs: 100, maxBackoffMs: 2000 });

/**
 * A complete policy from the caller's partial one.
 * @param {{maxAttempts?: number, initialBackoffMs?: number, maxBackoffMs?: number,
 *          onRetry?: Function}} [options]
 */
function retryPolicy(options = {}) {
  const policy = { ...DEFAULT_POLICY, onRetry: undefined, ...options };
  if (!(Number.isInteger(policy.maxAttempts) && policy.maxAttempts >= 1)) {
    throw new TypeError('retry.maxAttempts must be an integer of at least 1');
  }
  if (!(policy.initialBackoffMs >= 0 && policy.maxBackoffMs >= policy.initialBackoffMs)) {
    throw new TypeError('retry: need 0 <= initialBackoffMs <= maxBackoffMs');
  }
  return policy;
}

/**
 * The wait before retry number `retry` (0 for the first retry): full jitter.
 * @param {{initialBackoffMs: number, maxBackoffMs: number}} policy
 * @param {number} retry
 */
function backoffMs(policy, retry) {
  return Math.random() * Math.min(policy.maxBackoffMs, policy.initialBackoffMs * 2 ** retry);
}

/** @param {number} ms */
function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Whether `err` may be retried at all: UNAVAILABLE, and never a failed decryption.
 * @param {unknown} err
 */
function isRetryable(err) {
  return err instanceof UnavailableError && !(err instanceof DecryptionFailedError);
}

/**
 * Runs attempt(n) for n = 1, 2, ... until it succeeds, fails with an error that may
 * not be retried (`retryable(err)` false), runs out of attempts, or the next wait
 * would pass `deadline` (ms since the epoch, or undefined for none): then throws the
 * last error.
 * @template T
 * @param {ReturnType<typeof retryPolicy>} policy
 * @param {number | undefined} deadline
 * @param {(attempt: number) => Promise<T>} attempt
 * @param {(err: unknown) => boolean} [retryable]
 * @returns {Promise<T>}
 */
async function withRetries(policy, deadline, attempt, retryable = isRetryable) {
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      if (!retryable(err) || n >= policy.maxAttempts) throw err;
      const delayMs = backoffMs(policy, n - 1);
      if (deadline !== undefined && Date.now() + delayMs >= deadline) throw err;
      if (policy.onRetry) policy.onRetry({ attempt: n, delayMs, error: err });
      await sleep(delayMs);
    }
  }
}

module.exports = { DEFAULT_POLICY, retryPolicy, backoffMs, isRetryable, withRetries, sleep };
