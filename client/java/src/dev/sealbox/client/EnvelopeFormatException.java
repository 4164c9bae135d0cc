package dev.sealbox.client;

import io.grpc.Status;

/**
 * Not an envelope file, or its header is damaged. A segment that does not verify, or
 * a file cut short or extended, is a {@link DecryptionFailedException} instead. Code
 * {@code INVALID_ARGUMENT}, as in the other libraries (docs/CLIENTS.md).
 */
public class EnvelopeFormatException extends SealboxException {
  private static final long serialVersionUID = 1L;

  /**
   * The error, with the server's (or the client's) message.
   *
   * @param message what went wrong
   * @param cause the underlying exception, or null
   */
  public EnvelopeFormatException(String message, Throwable cause) {
    super(Status.Code.INVALID_ARGUMENT, message, cause);
  }
}
