package dev.sealbox.client;

import io.grpc.Status;

/**
 * An answer whose bytes do not match its CRC32C, or that does not confirm the server
 * checked the request's CRC32C: the data was damaged between the two processes'
 * memories. Nothing is returned. Code {@code DATA_LOSS}; not retried.
 */
public class ChecksumException extends SealboxException {
  private static final long serialVersionUID = 1L;

  /**
   * The error, with the server's (or the client's) message.
   *
   * @param message what went wrong
   * @param cause the underlying exception, or null
   */
  public ChecksumException(String message, Throwable cause) {
    super(Status.Code.DATA_LOSS, message, cause);
  }
}
