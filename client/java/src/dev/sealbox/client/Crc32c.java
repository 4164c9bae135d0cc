package dev.sealbox.client;

import com.google.protobuf.ByteString;
import com.google.protobuf.UInt32Value;
import java.util.zip.CRC32C;

/** CRC32C (Castagnoli) of the byte fields of unary and batch calls (docs/FORMAT.md). */
final class Crc32c {
  private Crc32c() {}

  /** The CRC32C of bytes, as proto's uint32 (an int holding the unsigned value). */
  static int of(ByteString bytes) {
    CRC32C crc = new CRC32C();
    crc.update(bytes.asReadOnlyByteBuffer());
    return (int) crc.getValue();
  }

  /** The CRC32C of bytes, as a request's optional checksum field wants it. */
  static UInt32Value field(ByteString bytes) {
    return UInt32Value.of(of(bytes));
  }

  /**
   * Checks an answer: its bytes against the CRC32C it gives, and that the server says
   * it checked each CRC32C the request gave. ChecksumException otherwise.
   */
  static void check(String call, String what, ByteString bytes, int crc32c, boolean... verified) {
    if (of(bytes) != crc32c) {
      throw new ChecksumException(call + ": the answer's " + what
          + " does not match its CRC32C (damaged in transit)", null);
    }
    for (boolean v : verified) {
      if (!v) {
        throw new ChecksumException(
            call + ": the server did not confirm it checked the request's CRC32C", null);
      }
    }
  }
}
