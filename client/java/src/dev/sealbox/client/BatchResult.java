package dev.sealbox.client;

/**
 * One item's answer in a batch call: its result, or the error that item alone met
 * (one bad item never fails the others).
 *
 * @param <T> the result type: {@link Sealed}, {@link Opened} or {@link Rewrapped}
 * @param value the result, or null when the item failed
 * @param error the item's error (a {@link DecryptionFailedException},
 *     {@link NotFoundException}, ...), or null when it succeeded
 */
public record BatchResult<T>(T value, SealboxException error) {
  /**
   * Whether the item succeeded.
   *
   * @return true when {@link #value()} holds the result
   */
  public boolean ok() {
    return error == null;
  }

  /**
   * The result, or the item's error thrown.
   *
   * @return the result
   * @throws SealboxException the item's error
   */
  public T get() {
    if (error != null) {
      throw error;
    }
    return value;
  }
}
