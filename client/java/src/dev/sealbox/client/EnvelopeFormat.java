package dev.sealbox.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.function.Function;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * sealbox's envelope file (docs/FORMAT.md, "Envelope file (0x03)"): the data
 * encrypted here, locally, with AES-256-GCM under a data key from GenerateDataKey,
 * the sealed data key kept in the header. Only the data key crosses the network.
 *
 * <pre>
 *   header    = 0x03 | S (u32 BE) | nonce prefix (7) | L (u16 BE) | sealed data key (L)
 *   segment i = AES-256-GCM(data key, nonce = prefix || i (u32 BE) || last flag,
 *                           AAD = header[0:12], plaintext i) = ciphertext || tag (16)
 * </pre>
 *
 * Every segment holds exactly S plaintext bytes but the last, which holds fewer
 * (possibly none) and alone has the last flag (0x01): truncation, reordering and
 * appended bytes all fail authentication, and memory is one segment either way.
 */
final class EnvelopeFormat {
  /** S for the files written here: 1 MiB of plaintext per segment. */
  static final int SEGMENT_SIZE = 1 << 20;

  // Package-private for the contract test (client/contract/contract.json).
  static final byte FORMAT = 0x03;
  static final int MIN_SEGMENT = 4096;
  static final int MAX_SEGMENT = 4 << 20;
  static final int MIN_SEALED_KEY = 49;
  static final int MAX_SEALED_KEY = 1024;
  static final int FIXED_HEADER = 14;
  static final int SEGMENT_AAD = 12;
  static final int TAG = 16;
  static final int DATA_KEY = 32;
  private static final SecureRandom RANDOM = new SecureRandom();

  private EnvelopeFormat() {}

  /** Writes the envelope file of everything in holds to out; returns the input bytes. */
  static long seal(DataKey dataKey, InputStream in, OutputStream out, Progress progress,
      long total) throws IOException {
    byte[] key = dataKey.plaintext();
    byte[] sealed = dataKey.ciphertext();
    try {
      if (key.length != DATA_KEY) {
        throw new EnvelopeFormatException(
            "envelope: the data key is " + key.length + " bytes, want " + DATA_KEY, null);
      }
      if (sealed.length < MIN_SEALED_KEY || sealed.length > MAX_SEALED_KEY) {
        throw new EnvelopeFormatException("envelope: the sealed data key is " + sealed.length
            + " bytes, want " + MIN_SEALED_KEY + " to " + MAX_SEALED_KEY, null);
      }
      byte[] prefix = new byte[7];
      RANDOM.nextBytes(prefix);
      ByteBuffer header = ByteBuffer.allocate(FIXED_HEADER + sealed.length);
      header.put(FORMAT).putInt(SEGMENT_SIZE).put(prefix).putShort((short) sealed.length)
          .put(sealed);
      out.write(header.array());
      Segments segments = new Segments(key, header.array());
      // A full read is never the last segment: the last holds fewer than S bytes.
      return eachSegment(in, out, SEGMENT_SIZE, SEGMENT_SIZE + TAG, segments::seal, progress,
          0, total);
    } finally {
      Arrays.fill(key, (byte) 0);
    }
  }

  /**
   * Writes the plaintext of the envelope file in holds to out, each segment only
   * after it verified; openKey opens the sealed data key (with Open). It can fail
   * after writing verified segments: the caller discards the output then.
   */
  static long open(Function<byte[], byte[]> openKey, InputStream in, OutputStream out,
      Progress progress, long total) throws IOException {
    byte[] fixed = in.readNBytes(FIXED_HEADER);
    if (fixed.length < FIXED_HEADER) {
      throw new EnvelopeFormatException("envelope: not an envelope file (shorter than its header)",
          null);
    }
    ByteBuffer view = ByteBuffer.wrap(fixed);
    if (fixed[0] != FORMAT) {
      throw new EnvelopeFormatException(String.format(
          "envelope: not an envelope file (format byte 0x%02x, want 0x03)", fixed[0]), null);
    }
    int s = view.getInt(1);
    if (s < MIN_SEGMENT || s > MAX_SEGMENT || Integer.bitCount(s) != 1) {
      throw new EnvelopeFormatException("envelope: bad segment size " + Integer.toUnsignedString(s)
          + " in the header (want a power of two from 4096 to 4194304)", null);
    }
    int l = Short.toUnsignedInt(view.getShort(12));
    if (l < MIN_SEALED_KEY || l > MAX_SEALED_KEY) {
      throw new EnvelopeFormatException(
          "envelope: bad sealed key length " + l + " in the header", null);
    }
    byte[] sealed = in.readNBytes(l);
    if (sealed.length < l) {
      throw new EnvelopeFormatException("envelope: not an envelope file (shorter than its header)",
          null);
    }
    byte[] header = new byte[FIXED_HEADER + l];
    System.arraycopy(fixed, 0, header, 0, FIXED_HEADER);
    System.arraycopy(sealed, 0, header, FIXED_HEADER, l);

    byte[] key = openKey.apply(sealed);
    try {
      if (key.length != DATA_KEY) {
        throw new EnvelopeFormatException(
            "envelope: the data key is " + key.length + " bytes, want " + DATA_KEY, null);
      }
      Segments segments = new Segments(key, header);
      // S+16 bytes are a segment that is not the last; what is left at the end, 16 to
      // S+15 bytes, is the last.
      return eachSegment(in, out, s + TAG, s, (segment, n, last, plaintext) -> {
        if (n < TAG) {
          // Cut at a segment boundary: as a changed byte would be, a failed decryption
          // (docs/CLIENTS.md), like the other libraries.
          throw new DecryptionFailedException(
              "envelope: the file is truncated: it does not end with a last segment", null);
        }
        return segments.open(segment, n, last, plaintext);
      }, progress, header.length, total);
    } finally {
      Arrays.fill(key, (byte) 0);
    }
  }

  /** What sealing or opening makes of one piece: n bytes of in, written to out. */
  private interface SegmentTransform {
    /** Returns the bytes written to out. */
    int apply(byte[] in, int n, boolean last, byte[] out) throws IOException;
  }

  /**
   * The loop sealing and opening share: reads pieces of pieceSize bytes (a short one,
   * possibly empty, is the last), writes what transform makes of each (at most
   * outputSize bytes), reports progress from start; returns start plus the bytes read.
   */
  private static long eachSegment(InputStream in, OutputStream out, int pieceSize,
      int outputSize, SegmentTransform transform, Progress progress, long start, long total)
      throws IOException {
    byte[] piece = new byte[pieceSize];
    byte[] output = new byte[outputSize];
    long done = start;
    while (true) {
      int n = in.readNBytes(piece, 0, pieceSize);
      boolean last = n < pieceSize;
      int length = transform.apply(piece, n, last, output);
      out.write(output, 0, length); // when opening, only once the segment verified
      done += n;
      if (progress != null) {
        progress.update(done, total);
      }
      if (last) {
        return done;
      }
    }
  }

  /** The segments of one file, in order: one AES-GCM key, the header's prefix and AAD. */
  private static final class Segments {
    private final Cipher cipher;
    private final SecretKeySpec key;
    private final byte[] aad;
    private final byte[] nonce = new byte[12];
    private long index;

    Segments(byte[] key, byte[] header) throws IOException {
      try {
        this.cipher = Cipher.getInstance("AES/GCM/NoPadding");
      } catch (GeneralSecurityException e) {
        throw new IOException("envelope: no AES-GCM in this JDK", e);
      }
      // SecretKeySpec keeps its own copy, which Java cannot wipe reliably: wiping
      // the caller's array narrows the window the key sits in memory, no more.
      this.key = new SecretKeySpec(key, "AES");
      this.aad = Arrays.copyOf(header, SEGMENT_AAD);
      System.arraycopy(header, 5, nonce, 0, 7);
    }

    private GCMParameterSpec next(boolean last) {
      if (index > 0xFFFFFFFFL) {
        throw new EnvelopeFormatException("envelope: more than 2^32 segments", null);
      }
      ByteBuffer.wrap(nonce, 7, 5).putInt((int) index).put((byte) (last ? 1 : 0));
      index++;
      return new GCMParameterSpec(TAG * 8, nonce);
    }

    int seal(byte[] plaintext, int n, boolean last, byte[] out) throws IOException {
      try {
        cipher.init(Cipher.ENCRYPT_MODE, key, next(last));
        cipher.updateAAD(aad);
        return cipher.doFinal(plaintext, 0, n, out, 0);
      } catch (GeneralSecurityException e) {
        throw new IOException("envelope: AES-GCM failed", e);
      }
    }

    int open(byte[] sealed, int n, boolean last, byte[] out) throws IOException {
      long i = index;
      try {
        cipher.init(Cipher.DECRYPT_MODE, key, next(last));
        cipher.updateAAD(aad);
        return cipher.doFinal(sealed, 0, n, out, 0);
      } catch (AEADBadTagException e) {
        throw new DecryptionFailedException("envelope: segment " + i + " does not authenticate"
            + " (the file was changed, truncated, reordered or extended)", e);
      } catch (GeneralSecurityException e) {
        throw new IOException("envelope: AES-GCM failed", e);
      }
    }
  }
}
