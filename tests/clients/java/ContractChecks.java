package dev.sealbox.client;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

/**
 * The Java library (client/java) against the client contract, without a server:
 * client/contract/contract.json (retry policy, error table, envelope numbers) and the
 * static vectors beside it (envelope files, status details, batch item errors). In
 * the library's package, to reach what the contract fixes but the API does not show.
 *
 * <p>usage: java dev.sealbox.client.ContractChecks CONTRACT_DIR; prints a line per
 * check and "N passed, M failed"; exits 1 on any failure.
 */
public final class ContractChecks {
  private static int passed;
  private static final List<String> failures = new ArrayList<>();

  private ContractChecks() {}

  private static void check(boolean ok, String what) {
    if (ok) {
      passed++;
    } else {
      failures.add(what);
      System.out.println("FAIL " + what);
    }
  }

  private static void equal(Object got, Object want, String what) {
    check(got.equals(want), what + ": " + got + ", contract says " + want);
  }

  /** A service config duration ("0.1s"). */
  private static Duration duration(String text) {
    return Duration.parse("PT" + text.toUpperCase());
  }

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    JsonObject contract = read(dir.resolve("contract.json"));
    JsonObject vectors = read(dir.resolve("vectors/vectors.json"));
    JsonObject policy = contract.getAsJsonObject("serviceConfig").getAsJsonArray("methodConfig")
        .get(0).getAsJsonObject().getAsJsonObject("retryPolicy");
    JsonObject errors = contract.getAsJsonObject("errors");

    errorTable(errors, vectors); // first: it reads the server's status details
    retry(policy, contract.getAsJsonObject("retry"), errors);
    envelope(contract.getAsJsonObject("envelope"), dir, vectors.getAsJsonObject("envelope"));

    System.out.println(passed + " passed, " + failures.size() + " failed");
    System.exit(failures.isEmpty() ? 0 : 1);
  }

  private static JsonObject read(Path path) throws IOException {
    return JsonParser.parseString(Files.readString(path)).getAsJsonObject();
  }

  private static void retry(JsonObject policy, JsonObject retry, JsonObject errors)
      throws IOException {
    int attempts = policy.get("maxAttempts").getAsInt();
    Duration initial = duration(policy.get("initialBackoff").getAsString());
    Duration max = duration(policy.get("maxBackoff").getAsString());
    double multiplier = policy.get("backoffMultiplier").getAsDouble();
    equal(Retry.DEFAULT_MAX_ATTEMPTS, attempts, "retry maxAttempts");
    equal(Retry.DEFAULT_INITIAL_BACKOFF, initial, "retry initialBackoff");
    equal(Retry.DEFAULT_MAX_BACKOFF, max, "retry maxBackoff");
    Retry defaults = new Retry(Retry.DEFAULT_MAX_ATTEMPTS, Retry.DEFAULT_INITIAL_BACKOFF,
        Retry.DEFAULT_MAX_BACKOFF);
    for (int n = 1; n < attempts; n++) {
      long want = (long) Math.min(max.toNanos(), initial.toNanos() * Math.pow(multiplier, n - 1));
      equal(defaults.ceilingNanos(n), want, "retry ceiling after attempt " + n);
    }
    List<String> retryable = strings(policy.getAsJsonArray("retryableStatusCodes"));
    List<String> neverReasons = strings(retry.getAsJsonArray("neverRetriedReasons"));
    Retry quick = new Retry(attempts, Duration.ZERO, Duration.ZERO);
    for (JsonElement element : errors.getAsJsonArray("fromServer")) {
      JsonObject row = element.getAsJsonObject();
      int[] calls = {0};
      try {
        quick.run(null, () -> true, () -> { }, () -> {
          calls[0]++;
          throw fromServer(row);
        });
      } catch (SealboxException expected) {
        // every attempt failed
      }
      boolean again = retryable.contains(row.get("code").getAsString())
          && !neverReasons.contains(row.get("reason").getAsString());
      equal(calls[0], again ? attempts : 1, "attempts for " + row);
    }
  }

  /** The exception for a row, as a failed call with the server's details would give. */
  private static SealboxException fromServer(JsonObject row) {
    Metadata trailers = new Metadata();
    if (row.get("reason").getAsString().equals("DECRYPTION_FAILED")) {
      trailers.put(Metadata.Key.of("grpc-status-details-bin", Metadata.BINARY_BYTE_MARSHALLER),
          serverDetails);
    }
    Status status = Status.fromCode(Status.Code.valueOf(row.get("code").getAsString()))
        .withDescription("m");
    return Errors.fromGrpc(new StatusRuntimeException(status, trailers));
  }

  private static byte[] serverDetails;

  private static void errorTable(JsonObject errors, JsonObject vectors) {
    for (JsonElement element : vectors.getAsJsonObject("statusDetails").getAsJsonArray("cases")) {
      JsonObject c = element.getAsJsonObject();
      byte[] blob = HexFormat.of().parseHex(c.get("hex").getAsString());
      if (c.get("name").getAsString().equals("server")) {
        serverDetails = blob;
      }
      equal(Errors.hasDecryptionFailed(blob), c.get("decryptionFailed").getAsBoolean(),
          "status details " + c.get("name").getAsString());
    }
    equal(Errors.DOMAIN, errors.get("domain").getAsString(), "ErrorInfo domain");
    equal(Errors.ERROR_INFO_TYPE, errors.get("errorInfoType").getAsString(), "ErrorInfo type");
    equal(Errors.ITEM_REASON_DECRYPTION_FAILED,
        errors.getAsJsonObject("itemReasonNumbers").get("DECRYPTION_FAILED").getAsInt(),
        "ItemError reason number");
    String base = errors.getAsJsonObject("base").get("java").getAsString();
    for (JsonElement element : errors.getAsJsonArray("fromServer")) {
      JsonObject row = element.getAsJsonObject();
      SealboxException e = fromServer(row);
      equal(e.getClass().getSimpleName(), row.get("java").getAsString(), "class for " + row);
      equal(e.code().name(), row.get("code").getAsString(), "code for " + row);
      check(e.getClass().getSuperclass().getSimpleName().equals(base)
          || e.getClass().getSimpleName().equals(base), "base class for " + row);
    }
    int failedNumber = errors.getAsJsonObject("itemReasonNumbers").get("DECRYPTION_FAILED")
        .getAsInt();
    for (JsonElement element : vectors.getAsJsonObject("itemErrors").getAsJsonArray("cases")) {
      JsonObject c = element.getAsJsonObject();
      String expect = c.get("expect").getAsString();
      String want = null;
      for (JsonElement r : errors.getAsJsonArray("fromServer")) {
        JsonObject row = r.getAsJsonObject();
        if (expect.equals("DECRYPTION_FAILED") ? row.get("reason").getAsString().equals(expect)
            : row.get("code").getAsString().equals(expect)
                && row.get("reason").getAsString().isEmpty()) {
          want = row.get("java").getAsString();
        }
      }
      int code = Status.Code.valueOf(c.get("code").getAsString()).value();
      int reason = c.get("reason").getAsInt();
      check(reason == 0 || reason == failedNumber, "item reason number " + reason);
      equal(Errors.fromItem(code, "m", reason).getClass().getSimpleName(), want, "item " + c);
    }
    for (JsonElement element : errors.getAsJsonArray("fromLibrary")) {
      JsonObject row = element.getAsJsonObject();
      SealboxException made;
      switch (row.get("case").getAsString()) {
        case "answer checksum wrong": made = new ChecksumException("x", null); break;
        case "not an envelope file": made = new EnvelopeFormatException("x", null); break;
        default: continue;
      }
      equal(made.getClass().getSimpleName(), row.get("java").getAsString(), row.toString());
      equal(made.code().name(), row.get("code").getAsString(), "code of " + row);
    }
  }

  private static void envelope(JsonObject e, Path dir, JsonObject vectors) throws Exception {
    equal((int) EnvelopeFormat.FORMAT, e.get("format").getAsInt(), "envelope format");
    equal(EnvelopeFormat.SEGMENT_SIZE, e.get("writerSegmentBytes").getAsInt(), "segment size");
    equal(EnvelopeFormat.MIN_SEGMENT, e.get("minSegmentBytes").getAsInt(), "min segment");
    equal(EnvelopeFormat.MAX_SEGMENT, e.get("maxSegmentBytes").getAsInt(), "max segment");
    equal(EnvelopeFormat.MIN_SEALED_KEY, e.get("minSealedKeyBytes").getAsInt(), "min sealed key");
    equal(EnvelopeFormat.MAX_SEALED_KEY, e.get("maxSealedKeyBytes").getAsInt(), "max sealed key");
    equal(EnvelopeFormat.FIXED_HEADER, e.get("fixedHeaderBytes").getAsInt(), "fixed header");
    equal(EnvelopeFormat.SEGMENT_AAD, e.get("segmentAadBytes").getAsInt(), "segment AAD");
    equal(EnvelopeFormat.TAG, e.get("tagBytes").getAsInt(), "tag");
    equal(EnvelopeFormat.DATA_KEY, e.get("dataKeyBytes").getAsInt(), "data key");

    byte[] dataKey = HexFormat.of().parseHex(vectors.get("dataKey").getAsString());
    for (JsonElement element : vectors.getAsJsonArray("cases")) {
      JsonObject c = element.getAsJsonObject();
      String name = c.get("file").getAsString();
      byte[] file = Files.readAllBytes(dir.resolve("vectors").resolve(name));
      List<byte[]> asked = new ArrayList<>();
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      String outcome = "ok";
      try (InputStream in = Files.newInputStream(dir.resolve("vectors").resolve(name))) {
        EnvelopeFormat.open(sealed -> {
          asked.add(sealed.clone());
          return dataKey.clone(); // the library wipes it
        }, in, out, null, file.length);
      } catch (DecryptionFailedException failed) {
        outcome = "DecryptionFailed";
      } catch (EnvelopeFormatException damaged) {
        outcome = "EnvelopeFormat";
      }
      String expect = c.get("expect").getAsString();
      equal(outcome, expect, "envelope " + name);
      if (expect.equals("ok")) {
        String sha = HexFormat.of().formatHex(
            MessageDigest.getInstance("SHA-256").digest(out.toByteArray()));
        equal(sha, c.get("plaintextSha256").getAsString(), "plaintext of " + name);
        int length = Short.toUnsignedInt(
            ByteBuffer.wrap(file).getShort(e.get("sealedKeyLengthOffset").getAsInt()));
        int start = e.get("fixedHeaderBytes").getAsInt();
        check(asked.size() == 1
            && Arrays.equals(asked.get(0), Arrays.copyOfRange(file, start, start + length)),
            "the sealed key Open was asked for " + name);
      } else if (expect.equals("EnvelopeFormat")) {
        check(asked.isEmpty(), "no Open for the damaged header of " + name);
      }
    }
  }

  private static List<String> strings(JsonArray array) {
    List<String> out = new ArrayList<>();
    array.forEach(element -> out.add(element.getAsString()));
    return out;
  }
}
