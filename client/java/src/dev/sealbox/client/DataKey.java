package dev.sealbox.client;

/**
 * What {@link SealboxClient#generateDataKey} returns: a fresh data key for envelope
 * encryption.
 *
 * @param plaintext the raw key bytes (16 or 32), or empty when not asked for; use it,
 *     then wipe it ({@code java.util.Arrays.fill(plaintext, (byte) 0)})
 * @param ciphertext the data key sealed under the named key: a unary ciphertext,
 *     opened with {@link SealboxClient#open}
 * @param keyVersion the key version it was sealed under
 */
public record DataKey(byte[] plaintext, byte[] ciphertext, int keyVersion) {}
