package dev.sealbox.client;

/**
 * What {@link SealboxClient#rewrap} returns.
 *
 * @param ciphertext the same plaintext, sealed under the key's primary version
 * @param keyVersion the key version of the new ciphertext
 * @param previousKeyVersion the key version of the ciphertext given
 */
public record Rewrapped(byte[] ciphertext, int keyVersion, int previousKeyVersion) {}
