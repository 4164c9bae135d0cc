package dev.sealbox.client;

import io.grpc.Status;

/**
 * The key or the version is disabled, or a token that cannot be renewed (one that
 * does not expire, or is at its max_expire_time). Not retried.
 */
public class FailedPreconditionException extends SealboxException {
  private static final long serialVersionUID = 1L;

  /**
   * The error, with the server's (or the client's) message.
   *
   * @param message what went wrong
   * @param cause the underlying exception, or null
   */
  public FailedPreconditionException(String message, Throwable cause) {
    super(Status.Code.FAILED_PRECONDITION, message, cause);
  }
}
