import com.google.protobuf.ByteString;
import dev.sealbox.client.*;
import dev.sealbox.client.proto.Data;
import io.grpc.*;
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.time.Duration;
import java.util.*;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Drives the Java client library against a real server for java_client_test.py:
 *
 *   calls ADDRESS TOKEN DIR   every call, checksums, errors, streams, files, envelope
 *   retry ADDRESS TOKEN       waits for "go" on stdin (the test stops the server), then
 *                             a call that must outlive the server's restart
 *   renew ADDRESS TOKEN SECS  calls for SECS seconds with automatic token renewal
 *
 * Prints "ok NAME ..." per check; the first failure throws (exit 1).
 */
public final class JavaClientChecks {
  private static final byte[] NONE = new byte[0];

  public static void main(String[] args) throws Exception {
    switch (args[0]) {
      case "calls" -> calls(args[1], args[2], Path.of(args[3]));
      case "retry" -> retry(args[1], args[2]);
      case "renew" -> renew(args[1], args[2], Integer.parseInt(args[3]));
      default -> throw new IllegalArgumentException(args[0]);
    }
  }

  static void check(boolean condition, String what) {
    if (!condition) {
      throw new AssertionError(what);
    }
  }

  static void ok(String line) {
    System.out.println("ok " + line);
    System.out.flush();
  }

  /** Runs body, which must throw exactly type. */
  static void fails(Class<? extends Exception> type, String name, Callable body) throws Exception {
    try {
      body.call();
    } catch (Exception e) {
      if (e.getClass() != type) {
        throw new AssertionError(name + ": want " + type.getSimpleName() + ", got " + e, e);
      }
      ok(name + " " + e.getClass().getSimpleName());
      return;
    }
    throw new AssertionError(name + ": no " + type.getSimpleName());
  }

  interface Callable {
    void call() throws Exception;
  }

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static byte[] random(int n) {
    byte[] b = new byte[n];
    new Random(n).nextBytes(b);
    return b;
  }

  static byte[] flipped(byte[] b, int at) {
    byte[] c = b.clone();
    c[at] ^= 1;
    return c;
  }

  static void calls(String address, String token, Path dir) throws Exception {
    try (SealboxClient client = SealboxClient.builder(address).token(token).build()) {
      // Unary.
      Sealed sealed = client.seal("default", bytes("hello, sealbox"), bytes("row-7"));
      check(sealed.ciphertext().length == 14 + 49 && sealed.keyVersion() == 1, "seal");
      Opened opened = client.open("default", sealed.ciphertext(), bytes("row-7"));
      check(Arrays.equals(opened.plaintext(), bytes("hello, sealbox")), "open");
      ok("seal open");
      Rewrapped rewrapped = client.rewrap("default", sealed.ciphertext(), bytes("row-7"));
      check(rewrapped.previousKeyVersion() == 1, "rewrap versions");
      check(Arrays.equals(client.open("default", rewrapped.ciphertext(), bytes("row-7"))
          .plaintext(), bytes("hello, sealbox")), "open the rewrapped");
      ok("rewrap");
      DataKey dk = client.generateDataKey("default", bytes("file-1"), 32, true);
      check(dk.plaintext().length == 32 && dk.ciphertext().length == 81, "datakey sizes");
      check(Arrays.equals(client.open("default", dk.ciphertext(), bytes("file-1")).plaintext(),
          dk.plaintext()), "datakey opens");
      DataKey sealedOnly = client.generateDataKey("default", NONE, 16, false);
      check(sealedOnly.plaintext().length == 0 && sealedOnly.ciphertext().length == 65, "dk16");
      ok("generateDataKey");

      // Batches: one bad item fails alone.
      List<BatchResult<Sealed>> sb = client.sealBatch(List.of(
          new BatchItem("default", bytes("a")), new BatchItem("nope", bytes("b")),
          new BatchItem("default", bytes("c"), bytes("ctx"))));
      check(sb.get(0).ok() && sb.get(2).ok(), "sealBatch oks");
      check(sb.get(1).error() instanceof NotFoundException, "sealBatch item error");
      List<BatchResult<Opened>> ob = client.openBatch(List.of(
          new BatchItem("default", sb.get(0).get().ciphertext()),
          new BatchItem("default", flipped(sb.get(2).get().ciphertext(), 40), bytes("ctx"))));
      check(Arrays.equals(ob.get(0).get().plaintext(), bytes("a")), "openBatch item");
      check(ob.get(1).error() instanceof DecryptionFailedException, "openBatch tampered item");
      List<BatchResult<Rewrapped>> rb = client.rewrapBatch(List.of(
          new BatchItem("default", sb.get(2).get().ciphertext(), bytes("ctx"))));
      check(rb.get(0).get().keyVersion() == 1, "rewrapBatch");
      ok("sealBatch openBatch rewrapBatch");

      // Errors, told apart by type.
      fails(DecryptionFailedException.class, "tampered-unary",
          () -> client.open("default", flipped(sealed.ciphertext(), 40), bytes("row-7")));
      fails(DecryptionFailedException.class, "wrong-aad",
          () -> client.open("default", sealed.ciphertext(), bytes("row-8")));
      fails(NotFoundException.class, "unknown-key", () -> client.seal("nope", NONE, NONE));
      fails(InvalidArgumentException.class, "stream-to-open",
          () -> client.open("default", streamOf(client, random(10)), NONE));
      fails(FailedPreconditionException.class, "renew-non-expiring",
          () -> client.renewToken(null));
      fails(DeadlineExceededException.class, "deadline",
          () -> client.withDeadline(Duration.ofNanos(1)).seal("default", NONE, NONE));
      try (SealboxClient bad = SealboxClient.builder(address).token("sbx_wrong").build()) {
        fails(UnauthenticatedException.class, "bad-token", () -> bad.seal("default", NONE, NONE));
      }

      // Streams in memory: 3 MiB + 5 bytes.
      byte[] big = random(3 * (1 << 20) + 5);
      byte[] stream = streamOf(client, big);
      check(stream.length == 48 + 48 * 65552 + 5 + 16, "stream length " + stream.length);
      ByteArrayOutputStream back = new ByteArrayOutputStream();
      client.openStream("default", NONE, new ByteArrayInputStream(stream), back);
      check(Arrays.equals(back.toByteArray(), big), "stream round trip");
      ok("sealStream openStream");
      fails(DecryptionFailedException.class, "tampered-stream", () -> client.openStream(
          "default", NONE, new ByteArrayInputStream(flipped(stream, 100000)),
          new ByteArrayOutputStream()));
      fails(DecryptionFailedException.class, "truncated-stream", () -> client.openStream(
          "default", NONE, new ByteArrayInputStream(Arrays.copyOf(stream, 48 + 65552)),
          new ByteArrayOutputStream()));

      // Files through the streams, and envelope files.
      Path plain = dir.resolve("plain.bin");
      Files.write(plain, big);
      long[] seen = {0};
      client.sealFile("default", bytes("f"), plain, dir.resolve("plain.sealed"),
          (done, total) -> seen[0] = done);
      check(seen[0] == big.length, "progress " + seen[0]);
      client.openFile("default", bytes("f"), dir.resolve("plain.sealed"), dir.resolve("plain.out"),
          null);
      check(Arrays.equals(Files.readAllBytes(dir.resolve("plain.out")), big), "file round trip");
      ok("sealFile openFile");
      client.sealEnvelopeFile("default", bytes("e"), plain, dir.resolve("plain.env"), null);
      check(Files.size(dir.resolve("plain.env")) == 95 + 3 * ((1 << 20) + 16) + 5 + 16,
          "envelope size");
      client.openEnvelopeFile("default", bytes("e"), dir.resolve("plain.env"),
          dir.resolve("plain.env.out"), null);
      check(Arrays.equals(Files.readAllBytes(dir.resolve("plain.env.out")), big), "envelope");
      ok("sealEnvelopeFile openEnvelopeFile");

      Files.write(dir.resolve("bad.sealed"), flipped(Files.readAllBytes(
          dir.resolve("plain.sealed")), 2_000_000));
      fails(DecryptionFailedException.class, "tampered-file", () -> client.openFile("default",
          bytes("f"), dir.resolve("bad.sealed"), dir.resolve("bad.out"), null));
      Files.write(dir.resolve("bad.env"), flipped(Files.readAllBytes(
          dir.resolve("plain.env")), 2_000_000));
      fails(DecryptionFailedException.class, "tampered-envelope", () -> client.openEnvelopeFile(
          "default", bytes("e"), dir.resolve("bad.env"), dir.resolve("bad.out"), null));
      fails(DecryptionFailedException.class, "envelope-wrong-aad", () -> client.openEnvelopeFile(
          "default", bytes("x"), dir.resolve("plain.env"), dir.resolve("bad.out"), null));
      Files.write(dir.resolve("short.env"), Arrays.copyOf(Files.readAllBytes(
          dir.resolve("plain.env")), 95 + (1 << 20) + 16));
      fails(DecryptionFailedException.class, "truncated-envelope", () -> client.openEnvelopeFile(
          "default", bytes("e"), dir.resolve("short.env"), dir.resolve("bad.out"), null));
      fails(EnvelopeFormatException.class, "not-envelope", () -> client.openEnvelopeFile(
          "default", bytes("e"), plain, dir.resolve("bad.out"), null));
      check(!Files.exists(dir.resolve("bad.out")), "a failed open leaves no output");
      try (DirectoryStream<Path> left = Files.newDirectoryStream(dir, "*.partial")) {
        check(!left.iterator().hasNext(), "no temporary file left behind");
      }
      ok("failed-opens-leave-nothing");
    }

    // Checksums: a request damaged after its CRC32C was computed is refused by the
    // server; an answer damaged on the way back is refused by the client.
    try (SealboxClient damagedRequests = SealboxClient.builder(address).token(token)
        .intercept(new Damage(true)).build()) {
      fails(InvalidArgumentException.class, "request-crc32c-refused",
          () -> damagedRequests.seal("default", bytes("hello"), NONE));
    }
    try (SealboxClient damagedAnswers = SealboxClient.builder(address).token(token)
        .intercept(new Damage(false)).build()) {
      fails(ChecksumException.class, "answer-crc32c-refused",
          () -> damagedAnswers.seal("default", bytes("hello"), NONE));
    }
  }

  static byte[] streamOf(SealboxClient client, byte[] plaintext) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    client.sealStream("default", NONE, new ByteArrayInputStream(plaintext), out);
    return out.toByteArray();
  }

  /** Flips a bit of a SealRequest's plaintext or a SealResponse's ciphertext in flight. */
  static final class Damage implements ClientInterceptor {
    private final boolean requests;

    Damage(boolean requests) {
      this.requests = requests;
    }

    static ByteString flip(ByteString b) {
      return ByteString.copyFrom(flipped(b.toByteArray(), 0));
    }

    @Override
    @SuppressWarnings("unchecked")
    public <Q, A> ClientCall<Q, A> interceptCall(MethodDescriptor<Q, A> method,
        CallOptions options, Channel next) {
      return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
        @Override
        public void sendMessage(Q message) {
          if (requests && message instanceof Data.SealRequest r) {
            message = (Q) r.toBuilder().setPlaintext(flip(r.getPlaintext())).build();
          }
          super.sendMessage(message);
        }

        @Override
        public void start(Listener<A> listener, Metadata headers) {
          super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(
              listener) {
            @Override
            public void onMessage(A message) {
              if (!requests && message instanceof Data.SealResponse r) {
                message = (A) r.toBuilder().setCiphertext(flip(r.getCiphertext())).build();
              }
              super.onMessage(message);
            }
          }, headers);
        }
      };
    }
  }

  /** Counts the calls (attempts) that go out. */
  static final class Count implements ClientInterceptor {
    final AtomicInteger calls = new AtomicInteger();

    @Override
    public <Q, A> ClientCall<Q, A> interceptCall(MethodDescriptor<Q, A> method,
        CallOptions options, Channel next) {
      calls.incrementAndGet();
      return next.newCall(method, options);
    }
  }

  static void retry(String address, String token) throws Exception {
    Count count = new Count();
    try (SealboxClient client = SealboxClient.builder(address).token(token)
            .retries(30, Duration.ofMillis(100), Duration.ofMillis(500))
            .intercept(count).build();
        SealboxClient once = SealboxClient.builder(address).token(token)
            .retries(1, Duration.ofMillis(100), Duration.ofMillis(100)).build()) {
      client.seal("default", bytes("warm"), NONE);
      once.seal("default", bytes("warm"), NONE);
      System.out.println("ready");
      System.out.flush();
      new BufferedReader(new InputStreamReader(System.in)).readLine(); // the server is down
      fails(UnavailableException.class, "no-retry-unavailable",
          () -> once.seal("default", NONE, NONE));
      int before = count.calls.get();
      System.out.println("calling");
      System.out.flush();
      long started = System.nanoTime();
      Sealed sealed = client.seal("default", bytes("across a restart"), NONE);
      check(sealed.keyVersion() == 1, "sealed");
      ok(String.format("retry attempts=%d seconds=%.2f", count.calls.get() - before,
          (System.nanoTime() - started) / 1e9));
    }
  }

  static void renew(String address, String token, int seconds) throws Exception {
    List<RenewedToken> renewed = Collections.synchronizedList(new ArrayList<>());
    try (SealboxClient client = SealboxClient.builder(address).token(token)
        .renewToken(null, renewed::add).build()) {
      long end = System.nanoTime() + seconds * 1_000_000_000L;
      int calls = 0;
      while (System.nanoTime() < end) {
        client.seal("default", bytes("still here"), NONE);
        calls++;
        Thread.sleep(250);
      }
      check(!client.token().equals(token), "the client switched tokens");
      ok("renew calls=" + calls + " renewals=" + renewed.size() + " last=" + client.token());
    }
  }
}
