package dev.sealbox.client;

import io.grpc.Status;

/**
 * A malformed request, other than a failed decryption (which is
 * {@link DecryptionFailedException}): an invalid key name, a ciphertext given to the
 * wrong call, or a request whose CRC32C the server found wrong ("checksum
 * mismatch"). Not retried.
 */
public class InvalidArgumentException extends SealboxException {
  private static final long serialVersionUID = 1L;

  /**
   * The error, with the server's (or the client's) message.
   *
   * @param message what went wrong
   * @param cause the underlying exception, or null
   */
  public InvalidArgumentException(String message, Throwable cause) {
    super(Status.Code.INVALID_ARGUMENT, message, cause);
  }
}
