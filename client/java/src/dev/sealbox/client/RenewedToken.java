package dev.sealbox.client;

import java.time.Instant;

/**
 * A successor token from RenewToken, which the client uses from then on.
 *
 * @param token the successor, for {@code authorization: Bearer <token>}; shown only
 *     this once, so a program that must survive a restart stores it
 * @param tokenId its id (what the admin plane lists and revokes)
 * @param expireTime when it stops working
 */
public record RenewedToken(String token, String tokenId, Instant expireTime) {
  /** Keeps the token itself out of logs. */
  @Override
  public String toString() {
    return "RenewedToken[tokenId=" + tokenId + ", expireTime=" + expireTime + "]";
  }
}
