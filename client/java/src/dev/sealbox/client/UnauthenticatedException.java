package dev.sealbox.client;

import io.grpc.Status;

/**
 * No token, or an unknown, revoked or expired one. Not retried.
 */
public class UnauthenticatedException extends SealboxException {
  private static final long serialVersionUID = 1L;

  /**
   * The error, with the server's (or the client's) message.
   *
   * @param message what went wrong
   * @param cause the underlying exception, or null
   */
  public UnauthenticatedException(String message, Throwable cause) {
    super(Status.Code.UNAUTHENTICATED, message, cause);
  }
}
