package dev.sealbox.client;

import io.grpc.Status;

/**
 * Too many failed authentications from this address, too many failed decryptions
 * under the key, or a message over the server's limits. Not retried.
 */
public class ResourceExhaustedException extends SealboxException {
  private static final long serialVersionUID = 1L;

  /**
   * The error, with the server's (or the client's) message.
   *
   * @param message what went wrong
   * @param cause the underlying exception, or null
   */
  public ResourceExhaustedException(String message, Throwable cause) {
    super(Status.Code.RESOURCE_EXHAUSTED, message, cause);
  }
}
