package dev.sealbox.client;

import io.grpc.Status;

/**
 * Not an envelope file, or a damaged one (a bad header, a truncated end). A segment
 * that does not verify is a {@link DecryptionFailedException} instead. Code
 * {@code DATA_LOSS}.
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
    super(Status.Code.DATA_LOSS, message, cause);
  }
}
