package dev.sealbox.client;

/** Told how far a file call has got; called on the caller's thread. */
@FunctionalInterface
public interface Progress {
  /**
   * Reports progress.
   *
   * @param done input bytes processed so far
   * @param total the input file's size in bytes
   */
  void update(long done, long total);
}
