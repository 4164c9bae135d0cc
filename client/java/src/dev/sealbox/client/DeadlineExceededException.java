package dev.sealbox.client;

import io.grpc.Status;

/**
 * The call's deadline passed (it covers every attempt of a retried call). Not
 * retried.
 */
public class DeadlineExceededException extends SealboxException {
  private static final long serialVersionUID = 1L;

  /**
   * The error, with the server's (or the client's) message.
   *
   * @param message what went wrong
   * @param cause the underlying exception, or null
   */
  public DeadlineExceededException(String message, Throwable cause) {
    super(Status.Code.DEADLINE_EXCEEDED, message, cause);
  }
}
