package dev.sealbox.client;

/**
 * One item of a batch call.
 *
 * @param key the key name
 * @param data the plaintext (SealBatch) or the ciphertext (OpenBatch, RewrapBatch)
 * @param associatedData the associated data (empty for none)
 */
public record BatchItem(String key, byte[] data, byte[] associatedData) {
  /**
   * An item without associated data.
   *
   * @param key the key name
   * @param data the plaintext or ciphertext
   */
  public BatchItem(String key, byte[] data) {
    this(key, data, new byte[0]);
  }
}
