package dev.sealbox.client;

import io.grpc.Status;

/**
 * Outside the token's scope (operation or key), or the admin token was used. Not
 * retried.
 */
public class PermissionDeniedException extends SealboxException {
  private static final long serialVersionUID = 1L;

  /**
   * The error, with the server's (or the client's) message.
   *
   * @param message what went wrong
   * @param cause the underlying exception, or null
   */
  public PermissionDeniedException(String message, Throwable cause) {
    super(Status.Code.PERMISSION_DENIED, message, cause);
  }
}
