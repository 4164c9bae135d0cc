package dev.sealbox.client;

import io.grpc.Status;

/**
 * The server is starting, stopping, unreachable, or its keystore is stale. Retried
 * where safe (docs/CLIENTS.md); thrown once the attempts or the deadline run out.
 */
public class UnavailableException extends SealboxException {
  private static final long serialVersionUID = 1L;

  /**
   * The error, with the server's (or the client's) message.
   *
   * @param message what went wrong
   * @param cause the underlying exception, or null
   */
  public UnavailableException(String message, Throwable cause) {
    super(Status.Code.UNAVAILABLE, message, cause);
  }
}
