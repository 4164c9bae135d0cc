package dev.sealbox.client;

import io.grpc.Status;

/**
 * A ciphertext did not authenticate: the wrong key, other associated data, or a changed
 * or truncated ciphertext, all alike. Recognised from the status details
 * ({@code google.rpc.ErrorInfo{domain: "sealbox.v1", reason: "DECRYPTION_FAILED"}}),
 * never from the message; also thrown for an envelope file segment that does not
 * verify. Never retried: each one counts against the key's decryption-failure limit.
 */
public class DecryptionFailedException extends SealboxException {
  private static final long serialVersionUID = 1L;

  /**
   * The error, with the server's (or the client's) message.
   *
   * @param message what went wrong
   * @param cause the underlying exception, or null
   */
  public DecryptionFailedException(String message, Throwable cause) {
    super(Status.Code.INVALID_ARGUMENT, message, cause);
  }
}
