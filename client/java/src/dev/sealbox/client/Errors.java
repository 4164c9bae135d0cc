package dev.sealbox.client;

import com.google.protobuf.CodedInputStream;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;

/** Turns a gRPC status (or a batch item's error) into a SealboxException, in one place. */
final class Errors {
  private static final Metadata.Key<byte[]> STATUS_DETAILS =
      Metadata.Key.of("grpc-status-details-bin", Metadata.BINARY_BYTE_MARSHALLER);
  // Package-private for the contract test (client/contract/contract.json).
  static final String ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo";
  static final String DOMAIN = "sealbox.v1";
  private static final String DECRYPTION_FAILED = "DECRYPTION_FAILED";
  /** sealbox.v1.ErrorReason.DECRYPTION_FAILED, as a batch item's reason field. */
  static final int ITEM_REASON_DECRYPTION_FAILED = 1;

  private Errors() {}

  /** The exception for a failed call. */
  static SealboxException fromGrpc(StatusRuntimeException e) {
    Status status = e.getStatus();
    boolean decryptionFailed = false;
    Metadata trailers = e.getTrailers();
    if (trailers != null) {
      byte[] details = trailers.get(STATUS_DETAILS);
      decryptionFailed = details != null && hasDecryptionFailed(details);
    }
    String message = status.getDescription() != null ? status.getDescription() : "";
    return of(status.getCode(), message, decryptionFailed, e);
  }

  /** The exception for one batch item's ItemError. */
  static SealboxException fromItem(int code, String message, int reason) {
    return of(Status.fromCodeValue(code).getCode(), message,
        reason == ITEM_REASON_DECRYPTION_FAILED, null);
  }

  private static SealboxException of(
      Status.Code code, String message, boolean decryptionFailed, Throwable cause) {
    if (decryptionFailed) {
      return new DecryptionFailedException(message, cause);
    }
    switch (code) {
      case UNAUTHENTICATED: return new UnauthenticatedException(message, cause);
      case PERMISSION_DENIED: return new PermissionDeniedException(message, cause);
      case NOT_FOUND: return new NotFoundException(message, cause);
      case INVALID_ARGUMENT: return new InvalidArgumentException(message, cause);
      case FAILED_PRECONDITION: return new FailedPreconditionException(message, cause);
      case RESOURCE_EXHAUSTED: return new ResourceExhaustedException(message, cause);
      case UNAVAILABLE: return new UnavailableException(message, cause);
      case DEADLINE_EXCEEDED: return new DeadlineExceededException(message, cause);
      default: return new SealboxException(code, message, cause);
    }
  }

  /**
   * Whether a serialized google.rpc.Status holds an ErrorInfo with domain sealbox.v1
   * and reason DECRYPTION_FAILED. Decoded by hand (Debian ships no Java classes for
   * google.rpc), reading only these fields:
   *
   * <pre>
   *   google.rpc.Status    { int32 code = 1; string message = 2; repeated Any details = 3; }
   *   google.protobuf.Any  { string type_url = 1; bytes value = 2; }
   *   google.rpc.ErrorInfo { string reason = 1; string domain = 2; map metadata = 3; }
   * </pre>
   * Malformed details count as "no": the code and message still stand.
   */
  static boolean hasDecryptionFailed(byte[] statusBytes) {
    try {
      CodedInputStream status = CodedInputStream.newInstance(statusBytes);
      for (int tag; (tag = status.readTag()) != 0; ) {
        if (tag == field(3, 2)) {
          if (isDecryptionFailed(status.readBytes().toByteArray())) {
            return true;
          }
        } else {
          status.skipField(tag);
        }
      }
    } catch (IOException malformed) {
      return false;
    }
    return false;
  }

  private static boolean isDecryptionFailed(byte[] anyBytes) throws IOException {
    CodedInputStream any = CodedInputStream.newInstance(anyBytes);
    String typeUrl = "";
    byte[] value = new byte[0];
    for (int tag; (tag = any.readTag()) != 0; ) {
      if (tag == field(1, 2)) {
        typeUrl = any.readStringRequireUtf8();
      } else if (tag == field(2, 2)) {
        value = any.readBytes().toByteArray();
      } else {
        any.skipField(tag);
      }
    }
    if (!typeUrl.equals(ERROR_INFO_TYPE)) {
      return false;
    }
    CodedInputStream info = CodedInputStream.newInstance(value);
    String reason = "";
    String domain = "";
    for (int tag; (tag = info.readTag()) != 0; ) {
      if (tag == field(1, 2)) {
        reason = info.readStringRequireUtf8();
      } else if (tag == field(2, 2)) {
        domain = info.readStringRequireUtf8();
      } else {
        info.skipField(tag);
      }
    }
    return domain.equals(DOMAIN) && reason.equals(DECRYPTION_FAILED);
  }

  /** A protobuf tag: field number and wire type (2: length-delimited). */
  private static int field(int number, int wireType) {
    return number << 3 | wireType;
  }
}
