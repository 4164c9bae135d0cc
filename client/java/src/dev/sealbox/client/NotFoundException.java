package dev.sealbox.client;

import io.grpc.Status;

/**
 * The tenant has no key of that name. Not retried.
 */
public class NotFoundException extends SealboxException {
  private static final long serialVersionUID = 1L;

  /**
   * The error, with the server's (or the client's) message.
   *
   * @param message what went wrong
   * @param cause the underlying exception, or null
   */
  public NotFoundException(String message, Throwable cause) {
    super(Status.Code.NOT_FOUND, message, cause);
  }
}
