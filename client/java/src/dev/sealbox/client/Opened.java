package dev.sealbox.client;

/**
 * What {@link SealboxClient#open} returns.
 *
 * @param plaintext the decrypted data
 * @param keyVersion the key version named in the ciphertext
 */
public record Opened(byte[] plaintext, int keyVersion) {}
