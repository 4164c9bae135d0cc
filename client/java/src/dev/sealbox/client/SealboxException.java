package dev.sealbox.client;

import io.grpc.Status;

/**
 * The base of every error the sealbox client throws: the gRPC status code and the
 * server's message. A program acts on the subclasses (one per case docs/CLIENTS.md
 * lists), never on the message text, which may change.
 *
 * <p>Unchecked, like grpc-java's own {@code StatusRuntimeException}; the calls that
 * read or write files or streams also throw {@link java.io.IOException} for the
 * caller's own I/O.
 */
public class SealboxException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** The gRPC status code. */
  private final Status.Code code;

  /**
   * An error with its gRPC code and message.
   *
   * @param code the gRPC status code (for errors found by the client itself, the code
   *     nearest in meaning, e.g. {@code DATA_LOSS} for a checksum mismatch)
   * @param message what went wrong
   * @param cause the underlying exception, or null
   */
  public SealboxException(Status.Code code, String message, Throwable cause) {
    super(message, cause);
    this.code = code;
  }

  /**
   * The gRPC status code.
   *
   * @return the code, e.g. {@code INVALID_ARGUMENT}
   */
  public Status.Code code() {
    return code;
  }
}
