package dev.sealbox.client;

import io.grpc.Deadline;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Retries a call on UNAVAILABLE only (docs/CLIENTS.md, "Retries"): exponential
 * backoff with full jitter (a random wait from 0 to min(max, initial * 2^attempt)),
 * at most maxAttempts attempts, all within the call's one deadline.
 */
final class Retry {
  /** One attempt of a call. */
  interface Attempt<T> {
    T run() throws IOException;
  }

  // The defaults: client/contract/contract.json's retryPolicy. Waits capped at 100 ms
  // doubling to 2 s: up to about 7 s in all, a server's restart.
  static final int DEFAULT_MAX_ATTEMPTS = 8;
  static final Duration DEFAULT_INITIAL_BACKOFF = Duration.ofMillis(100);
  static final Duration DEFAULT_MAX_BACKOFF = Duration.ofSeconds(2);

  final int maxAttempts;
  private final long initialNanos;
  private final long maxNanos;

  Retry(int maxAttempts, Duration initialBackoff, Duration maxBackoff) {
    if (maxAttempts < 1) {
      throw new IllegalArgumentException("maxAttempts must be at least 1");
    }
    this.maxAttempts = maxAttempts;
    this.initialNanos = initialBackoff.toNanos();
    this.maxNanos = maxBackoff.toNanos();
  }

  /**
   * Runs attempt until it succeeds, fails with anything but UnavailableException,
   * or retrying is not allowed (safe says so), the attempts run out or the next wait
   * would pass the deadline (null: none). beforeRetry runs before each new attempt.
   */
  <T> T run(Deadline deadline, BooleanSupplier safe, Runnable beforeRetry, Attempt<T> attempt)
      throws IOException {
    for (int n = 1; ; n++) {
      try {
        return attempt.run();
      } catch (UnavailableException e) {
        if (n >= maxAttempts || !safe.getAsBoolean()) {
          throw e;
        }
        long wait = ThreadLocalRandom.current().nextLong(ceilingNanos(n) + 1);
        if (deadline != null && deadline.timeRemaining(TimeUnit.NANOSECONDS) <= wait) {
          throw e;
        }
        try {
          TimeUnit.NANOSECONDS.sleep(wait);
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw e;
        }
        beforeRetry.run();
      }
    }
  }

  /** The longest wait after failed attempt n (1, 2, ...): initial * 2^(n-1), at most max. */
  long ceilingNanos(int n) {
    return Math.min(maxNanos, initialNanos << Math.min(n - 1, 30));
  }
}
