package dev.sealbox.client;

/**
 * What {@link SealboxClient#seal} returns.
 *
 * @param ciphertext the self-describing ciphertext (docs/FORMAT.md, "unary
 *     ciphertext"), 49 bytes longer than the plaintext
 * @param keyVersion the key version it was sealed under
 */
public record Sealed(byte[] ciphertext, int keyVersion) {}
