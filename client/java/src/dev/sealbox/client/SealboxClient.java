package dev.sealbox.client;

import com.google.protobuf.ByteString;
import dev.sealbox.client.proto.CryptoGrpc;
import dev.sealbox.client.proto.Data;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.Deadline;
import io.grpc.ForwardingClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.handler.ssl.SslContextBuilder;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * A client of sealbox's data plane ({@code sealbox.v1.Crypto}): one gRPC channel,
 * safe to share between threads. Every unary and batch call sends the CRC32C of its
 * payload and associated data and checks the answer's ({@link ChecksumException});
 * calls are retried on UNAVAILABLE where that is safe (docs/CLIENTS.md); errors are
 * {@link SealboxException} subclasses.
 *
 * <pre>{@code
 * try (SealboxClient client = SealboxClient.builder("127.0.0.1:50051")
 *     .token(System.getenv("SEALBOX_TOKEN")).build()) {
 *   Sealed sealed = client.seal("default", "hello".getBytes(UTF_8), new byte[0]);
 *   byte[] plaintext = client.open("default", sealed.ciphertext(), new byte[0]).plaintext();
 * }
 * }</pre>
 */
public final class SealboxClient implements AutoCloseable {
  /** The default deadline of a unary or batch call, covering all its attempts. */
  public static final Duration DEFAULT_DEADLINE = Duration.ofSeconds(30);

  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  private static final byte[] NONE = new byte[0];

  /** What every view of one client shares: the channel, the token, the policies. */
  private static final class Shared {
    final ManagedChannel channel;
    final CryptoGrpc.CryptoBlockingStub blocking;
    final CryptoGrpc.CryptoStub async;
    final AtomicReference<String> token;
    final Retry retry;
    final TokenRenewal renewal;

    Shared(ManagedChannel channel, List<ClientInterceptor> interceptors, String token,
        Retry retry, TokenRenewal renewal) {
      this.channel = channel;
      this.token = new AtomicReference<>(token);
      List<ClientInterceptor> all = new ArrayList<>(interceptors);
      all.add(new BearerToken(this.token)); // added last, so it runs first
      Channel intercepted = ClientInterceptors.intercept(channel, all);
      this.blocking = CryptoGrpc.newBlockingStub(intercepted);
      this.async = CryptoGrpc.newStub(intercepted);
      this.retry = retry;
      this.renewal = renewal;
    }
  }

  private final Shared shared;
  private final Duration unaryDeadline;
  private final Duration streamDeadline;

  private SealboxClient(Shared shared, Duration unaryDeadline, Duration streamDeadline) {
    this.shared = shared;
    this.unaryDeadline = unaryDeadline;
    this.streamDeadline = streamDeadline;
  }

  /**
   * Starts building a client.
   *
   * @param address the server, {@code host:port} (plaintext if the host is loopback,
   *     TLS otherwise, unless the builder says)
   * @return a builder
   */
  public static Builder builder(String address) {
    return new Builder(address);
  }

  /**
   * A view of this client (same channel and token) whose every call, streams and
   * files included, has this deadline.
   *
   * @param deadline how long each call may take, all attempts together
   * @return the view
   */
  public SealboxClient withDeadline(Duration deadline) {
    Objects.requireNonNull(deadline);
    return new SealboxClient(shared, deadline, deadline);
  }

  /**
   * The token the client sends now (the successor, once renewed).
   *
   * @return the bearer token, or null when the client authenticates by certificate
   */
  public String token() {
    return shared.token.get();
  }

  // ---- unary calls ----------------------------------------------------------------

  /**
   * Encrypts one message under the key's primary version (Seal).
   *
   * @param key the key name, e.g. "default"
   * @param plaintext at most the server's unary limit (1 MiB by default)
   * @param associatedData authenticated, not encrypted; Open must be given the same
   *     bytes (empty for none)
   * @return the ciphertext and key version
   * @throws SealboxException on failure; {@link ChecksumException} if the answer is
   *     damaged
   */
  public Sealed seal(String key, byte[] plaintext, byte[] associatedData) {
    Data.SealRequest request = sealRequest(new BatchItem(key, plaintext, associatedData));
    Data.SealResponse r = unary(true, stub -> stub.seal(request));
    return sealed(r);
  }

  /**
   * Decrypts a ciphertext from seal or rewrap (Open). Never retried when decryption
   * fails.
   *
   * @param key the key name it was sealed under
   * @param ciphertext the ciphertext
   * @param associatedData the associated data given to seal
   * @return the plaintext and key version
   * @throws DecryptionFailedException when it does not authenticate
   * @throws SealboxException on any other failure
   */
  public Opened open(String key, byte[] ciphertext, byte[] associatedData) {
    Data.OpenRequest request = openRequest(new BatchItem(key, ciphertext, associatedData));
    Data.OpenResponse r = unary(true, stub -> stub.open(request));
    return opened(r);
  }

  /**
   * Re-encrypts a ciphertext under the key's primary version without returning the
   * plaintext (Rewrap).
   *
   * @param key the key name
   * @param ciphertext a ciphertext from seal or rewrap
   * @param associatedData the associated data given to seal (the new ciphertext is
   *     bound to it too)
   * @return the new ciphertext and both key versions
   * @throws SealboxException on failure
   */
  public Rewrapped rewrap(String key, byte[] ciphertext, byte[] associatedData) {
    Data.RewrapRequest request = rewrapRequest(new BatchItem(key, ciphertext, associatedData));
    Data.RewrapResponse r = unary(true, stub -> stub.rewrap(request));
    return rewrapped(r);
  }

  /**
   * A fresh random data key for envelope encryption (GenerateDataKey).
   *
   * @param key the key name to seal it under
   * @param associatedData what the sealed data key is bound to (empty for none)
   * @param bytes 32 (AES-256) or 16 (AES-128)
   * @param includePlaintext also return the key in the clear
   * @return the data key, sealed (and in plaintext if asked)
   * @throws SealboxException on failure
   */
  public DataKey generateDataKey(String key, byte[] associatedData, int bytes,
      boolean includePlaintext) {
    ByteString aad = ByteString.copyFrom(associatedData);
    Data.GenerateDataKeyRequest request = Data.GenerateDataKeyRequest.newBuilder()
        .setKey(key).setDataKeyBytes(bytes).setAssociatedData(aad)
        .setIncludePlaintext(includePlaintext).setAssociatedDataCrc32C(Crc32c.field(aad))
        .build();
    Data.GenerateDataKeyResponse r = unary(true, stub -> stub.generateDataKey(request));
    Crc32c.check("GenerateDataKey", "ciphertext", r.getCiphertext(), r.getCiphertextCrc32C(),
        r.getVerifiedAssociatedDataCrc32C());
    Crc32c.check("GenerateDataKey", "plaintext", r.getPlaintext(), r.getPlaintextCrc32C());
    return new DataKey(r.getPlaintext().toByteArray(), r.getCiphertext().toByteArray(),
        r.getKeyVersion());
  }

  /**
   * Asks for a successor to the current token (RenewToken) and uses it from then on;
   * the renewal callback, if any, is told. Never retried: each call mints a token.
   *
   * @param ttl how long the successor works, or null for as long as the current
   *     token was issued for
   * @return the successor
   * @throws FailedPreconditionException for a token that does not expire or is at
   *     its max_expire_time
   * @throws SealboxException on any other failure
   */
  public RenewedToken renewToken(Duration ttl) {
    Data.RenewTokenRequest.Builder request = Data.RenewTokenRequest.newBuilder();
    if (ttl != null) {
      request.setTtl(com.google.protobuf.Duration.newBuilder()
          .setSeconds(ttl.getSeconds()).setNanos(ttl.getNano()));
    }
    Data.RenewTokenResponse r = attempt(unaryDeadline(), stub -> stub.renewToken(request.build()));
    RenewedToken renewed = new RenewedToken(r.getToken(), r.getTokenId(),
        Instant.ofEpochSecond(r.getExpireTime().getSeconds(), r.getExpireTime().getNanos()));
    shared.token.set(renewed.token());
    if (shared.renewal != null) {
      shared.renewal.renewed(renewed);
    }
    return renewed;
  }

  // ---- batch calls ----------------------------------------------------------------

  /**
   * Seals many small messages in one call (SealBatch): 1-1000 items, their plaintexts
   * together at most the unary limit.
   *
   * @param items key, plaintext and associated data of each
   * @return one result per item, in order: sealed, or that item's own error
   * @throws SealboxException when the call as a whole fails
   */
  public List<BatchResult<Sealed>> sealBatch(List<BatchItem> items) {
    Data.SealBatchRequest.Builder request = Data.SealBatchRequest.newBuilder();
    items.forEach(item -> request.addItems(sealRequest(item)));
    Data.SealBatchResponse r = unary(true, stub -> stub.sealBatch(request.build()));
    List<BatchResult<Sealed>> results = new ArrayList<>();
    for (Data.SealBatchResult item : r.getResultsList()) {
      results.add(item.hasError() ? failed(item.getError())
          : new BatchResult<>(sealed(item.getSealed()), null));
    }
    return counted(results, items);
  }

  /**
   * Opens many ciphertexts in one call (OpenBatch).
   *
   * @param items key, ciphertext and associated data of each
   * @return one result per item, in order: opened, or that item's own error (a
   *     {@link DecryptionFailedException} for one that does not authenticate)
   * @throws SealboxException when the call as a whole fails
   */
  public List<BatchResult<Opened>> openBatch(List<BatchItem> items) {
    Data.OpenBatchRequest.Builder request = Data.OpenBatchRequest.newBuilder();
    items.forEach(item -> request.addItems(openRequest(item)));
    Data.OpenBatchResponse r = unary(true, stub -> stub.openBatch(request.build()));
    List<BatchResult<Opened>> results = new ArrayList<>();
    for (Data.OpenBatchResult item : r.getResultsList()) {
      results.add(item.hasError() ? failed(item.getError())
          : new BatchResult<>(opened(item.getOpened()), null));
    }
    return counted(results, items);
  }

  /**
   * Rewraps many ciphertexts in one call (RewrapBatch).
   *
   * @param items key, ciphertext and associated data of each
   * @return one result per item, in order: rewrapped, or that item's own error
   * @throws SealboxException when the call as a whole fails
   */
  public List<BatchResult<Rewrapped>> rewrapBatch(List<BatchItem> items) {
    Data.RewrapBatchRequest.Builder request = Data.RewrapBatchRequest.newBuilder();
    items.forEach(item -> request.addItems(rewrapRequest(item)));
    Data.RewrapBatchResponse r = unary(true, stub -> stub.rewrapBatch(request.build()));
    List<BatchResult<Rewrapped>> results = new ArrayList<>();
    for (Data.RewrapBatchResult item : r.getResultsList()) {
      results.add(item.hasError() ? failed(item.getError())
          : new BatchResult<>(rewrapped(item.getRewrapped()), null));
    }
    return counted(results, items);
  }

  // ---- streams ----------------------------------------------------------------------

  /**
   * Encrypts everything in holds into a stream ciphertext written to out
   * (SealStream), in memory bounded by a few chunks whatever the length. Not
   * retried (an InputStream cannot be read again; {@link #sealFile} is). The output
   * is a complete ciphertext only if this returns.
   *
   * @param key the key name
   * @param associatedData bound to the whole stream (empty for none)
   * @param in the plaintext, read to its end (not closed)
   * @param out where the ciphertext goes (not closed)
   * @return the plaintext bytes read
   * @throws IOException from in or out
   * @throws SealboxException on failure
   */
  public long sealStream(String key, byte[] associatedData, InputStream in, OutputStream out)
      throws IOException {
    return sealStreamOnce(key, associatedData, in, out, null, -1, new StreamPump<>());
  }

  /**
   * Decrypts a stream ciphertext from in to out (OpenStream). Plaintext is written one
   * segment at a time, each after it verified; if this throws, discard everything
   * written ({@link #openFile} does that for you).
   *
   * @param key the key name
   * @param associatedData the associated data given to sealStream
   * @param in the stream ciphertext, read to its end (not closed)
   * @param out where the plaintext goes (not closed)
   * @return the ciphertext bytes read
   * @throws IOException from in or out
   * @throws DecryptionFailedException for a changed, truncated or extended stream
   * @throws SealboxException on any other failure
   */
  public long openStream(String key, byte[] associatedData, InputStream in, OutputStream out)
      throws IOException {
    return openStreamOnce(key, associatedData, in, out, null, -1, new StreamPump<>());
  }

  // ---- files --------------------------------------------------------------------------

  /**
   * Seals the file in into the stream ciphertext file out, through SealStream. out is
   * written beside its final name, flushed to disk and renamed only when complete; on
   * failure it is left as it was. Retried on UNAVAILABLE before the first answer.
   *
   * @param key the key name
   * @param associatedData bound to the whole stream (empty for none)
   * @param in the plaintext file
   * @param out the ciphertext file to write (replaced if it exists)
   * @param progress told of the plaintext bytes sent, or null
   * @return the plaintext bytes sealed
   * @throws IOException from the files
   * @throws SealboxException on failure
   */
  public long sealFile(String key, byte[] associatedData, Path in, Path out, Progress progress)
      throws IOException {
    return this.<Data.SealStreamRequest, Data.SealStreamResponse>viaFiles(in, out,
        (input, output, pump) -> sealStreamOnce(key, associatedData, input, output, progress, Files.size(in), pump));
  }

  /**
   * Opens the stream ciphertext file in into out, through OpenStream. out appears
   * only once every segment verified: a damaged file leaves nothing behind. Retried on
   * UNAVAILABLE before the first answer.
   *
   * @param key the key name
   * @param associatedData the associated data given when sealing
   * @param in the ciphertext file
   * @param out the plaintext file to write (replaced if it exists)
   * @param progress told of the ciphertext bytes sent, or null
   * @return the ciphertext bytes read
   * @throws IOException from the files
   * @throws DecryptionFailedException for a changed, truncated or extended file
   * @throws SealboxException on any other failure
   */
  public long openFile(String key, byte[] associatedData, Path in, Path out, Progress progress)
      throws IOException {
    return this.<Data.OpenStreamRequest, Data.OpenStreamResponse>viaFiles(in, out,
        (input, output, pump) -> openStreamOnce(key, associatedData, input, output, progress, Files.size(in), pump));
  }

  /**
   * Writes the envelope file (docs/FORMAT.md, 0x03) of the file in to out: a data key
   * from GenerateDataKey, the data encrypted here with AES-256-GCM in 1 MiB segments.
   * Only the data key crosses the network. out is written beside, flushed and renamed
   * only when complete.
   *
   * @param key the key name the data key is sealed under
   * @param associatedData what the data key is bound to (empty for none)
   * @param in the plaintext file
   * @param out the envelope file to write (replaced if it exists)
   * @param progress told of the plaintext bytes encrypted, or null
   * @return the plaintext bytes encrypted
   * @throws IOException from the files
   * @throws SealboxException on failure
   */
  public long sealEnvelopeFile(String key, byte[] associatedData, Path in, Path out,
      Progress progress) throws IOException {
    long total = Files.size(in);
    try (InputStream input = Files.newInputStream(in); AtomicFile output = new AtomicFile(out)) {
      DataKey dataKey = generateDataKey(key, associatedData, 32, true);
      BufferedOutputStream buffered = new BufferedOutputStream(output.stream(), 1 << 16);
      long n = EnvelopeFormat.seal(dataKey, input, buffered, progress, total);
      buffered.flush();
      output.commit();
      return n;
    }
  }

  /**
   * Opens the envelope file in into out: the data key opened with Open, the segments
   * decrypted here. out appears only once every segment verified.
   *
   * @param key the key name the file was sealed with
   * @param associatedData the associated data it was sealed with
   * @param in the envelope file
   * @param out the plaintext file to write (replaced if it exists)
   * @param progress told of the envelope bytes read, or null
   * @return the envelope bytes read
   * @throws IOException from the files
   * @throws EnvelopeFormatException for a file that is not an envelope file, or whose
   *     header is damaged
   * @throws DecryptionFailedException for a segment (or the sealed data key) that does
   *     not authenticate, or a file cut short or extended
   * @throws SealboxException on any other failure
   */
  public long openEnvelopeFile(String key, byte[] associatedData, Path in, Path out,
      Progress progress) throws IOException {
    long total = Files.size(in);
    try (InputStream input = Files.newInputStream(in); AtomicFile output = new AtomicFile(out)) {
      BufferedOutputStream buffered = new BufferedOutputStream(output.stream(), 1 << 16);
      long n = EnvelopeFormat.open(sealedKey -> open(key, sealedKey, associatedData).plaintext(),
          input, buffered, progress, total);
      buffered.flush();
      output.commit();
      return n;
    }
  }

  /**
   * Closes the channel (shared by every view of this client), waiting up to 5 s for
   * calls in flight.
   */
  @Override
  public void close() {
    shared.channel.shutdown();
    try {
      if (!shared.channel.awaitTermination(5, TimeUnit.SECONDS)) {
        shared.channel.shutdownNow();
      }
    } catch (InterruptedException e) {
      shared.channel.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }

  // ---- internals ----------------------------------------------------------------------

  /** A unary call: renewal first, then attempts (retried if retryable) in one deadline. */
  private <T> T unary(boolean retryable, Function<CryptoGrpc.CryptoBlockingStub, T> call) {
    renewIfDue();
    Deadline deadline = unaryDeadline();
    try {
      return shared.retry.run(deadline, () -> retryable, shared.channel::resetConnectBackoff,
          () -> attempt(deadline, call));
    } catch (IOException impossible) {
      throw new UncheckedIOException(impossible);
    }
  }

  private <T> T attempt(Deadline deadline, Function<CryptoGrpc.CryptoBlockingStub, T> call) {
    try {
      CryptoGrpc.CryptoBlockingStub stub = shared.blocking;
      return call.apply(deadline == null ? stub : stub.withDeadline(deadline));
    } catch (StatusRuntimeException e) {
      throw Errors.fromGrpc(e);
    }
  }

  private Deadline unaryDeadline() {
    return Deadline.after(unaryDeadline.toNanos(), TimeUnit.NANOSECONDS);
  }

  private void renewIfDue() {
    if (shared.renewal != null) {
      shared.renewal.beforeCall(() -> renewToken(null));
    }
  }

  private CryptoGrpc.CryptoStub streamStub() {
    return streamDeadline == null ? shared.async
        : shared.async.withDeadlineAfter(streamDeadline.toNanos(), TimeUnit.NANOSECONDS);
  }

  private long sealStreamOnce(String key, byte[] associatedData, InputStream in,
      OutputStream out, Progress progress, long total,
      StreamPump<Data.SealStreamRequest, Data.SealStreamResponse> pump) throws IOException {
    renewIfDue();
    Data.SealStreamRequest start = Data.SealStreamRequest.newBuilder()
        .setStart(streamStart(key, associatedData)).build();
    return pump.run(streamStub()::sealStream, start,
        chunk -> Data.SealStreamRequest.newBuilder().setPlaintextChunk(chunk).build(),
        Data.SealStreamResponse::getCiphertextChunk, in, out, progress, total);
  }

  private long openStreamOnce(String key, byte[] associatedData, InputStream in,
      OutputStream out, Progress progress, long total,
      StreamPump<Data.OpenStreamRequest, Data.OpenStreamResponse> pump) throws IOException {
    renewIfDue();
    Data.OpenStreamRequest start = Data.OpenStreamRequest.newBuilder()
        .setStart(streamStart(key, associatedData)).build();
    return pump.run(streamStub()::openStream, start,
        chunk -> Data.OpenStreamRequest.newBuilder().setCiphertextChunk(chunk).build(),
        Data.OpenStreamResponse::getPlaintextChunk, in, out, progress, total);
  }

  /** One attempt of a file call: input, output, and the pump whose answers it tracks. */
  private interface FileAttempt<Req, Resp> {
    long run(InputStream in, OutputStream out, StreamPump<Req, Resp> pump) throws IOException;
  }

  /**
   * Runs a stream call from the file in to an AtomicFile at out, retried on
   * UNAVAILABLE as long as no answer arrived (the file is read again from its start).
   */
  private <Req, Resp> long viaFiles(Path in, Path out, FileAttempt<Req, Resp> call)
      throws IOException {
    Deadline deadline = streamDeadline == null ? null
        : Deadline.after(streamDeadline.toNanos(), TimeUnit.NANOSECONDS);
    try (AtomicFile output = new AtomicFile(out)) {
      AtomicReference<StreamPump<Req, Resp>> last = new AtomicReference<>();
      long n = shared.retry.run(deadline, () -> !last.get().answered(),
          shared.channel::resetConnectBackoff, () -> {
            StreamPump<Req, Resp> pump = new StreamPump<>();
            last.set(pump);
            output.truncate();
            try (InputStream input = Files.newInputStream(in)) {
              BufferedOutputStream buffered = new BufferedOutputStream(output.stream(), 1 << 16);
              long sent = call.run(input, buffered, pump);
              buffered.flush();
              return sent;
            }
          });
      output.commit();
      return n;
    }
  }

  private static Data.StreamStart streamStart(String key, byte[] associatedData) {
    return Data.StreamStart.newBuilder().setKey(key)
        .setAssociatedData(ByteString.copyFrom(associatedData)).build();
  }

  private static Data.SealRequest sealRequest(BatchItem item) {
    ByteString data = ByteString.copyFrom(item.data());
    ByteString aad = ByteString.copyFrom(item.associatedData());
    return Data.SealRequest.newBuilder().setKey(item.key()).setPlaintext(data)
        .setAssociatedData(aad).setPlaintextCrc32C(Crc32c.field(data))
        .setAssociatedDataCrc32C(Crc32c.field(aad)).build();
  }

  private static Data.OpenRequest openRequest(BatchItem item) {
    ByteString data = ByteString.copyFrom(item.data());
    ByteString aad = ByteString.copyFrom(item.associatedData());
    return Data.OpenRequest.newBuilder().setKey(item.key()).setCiphertext(data)
        .setAssociatedData(aad).setCiphertextCrc32C(Crc32c.field(data))
        .setAssociatedDataCrc32C(Crc32c.field(aad)).build();
  }

  private static Data.RewrapRequest rewrapRequest(BatchItem item) {
    ByteString data = ByteString.copyFrom(item.data());
    ByteString aad = ByteString.copyFrom(item.associatedData());
    return Data.RewrapRequest.newBuilder().setKey(item.key()).setCiphertext(data)
        .setAssociatedData(aad).setCiphertextCrc32C(Crc32c.field(data))
        .setAssociatedDataCrc32C(Crc32c.field(aad)).build();
  }

  private static Sealed sealed(Data.SealResponse r) {
    Crc32c.check("Seal", "ciphertext", r.getCiphertext(), r.getCiphertextCrc32C(),
        r.getVerifiedPlaintextCrc32C(), r.getVerifiedAssociatedDataCrc32C());
    return new Sealed(r.getCiphertext().toByteArray(), r.getKeyVersion());
  }

  private static Opened opened(Data.OpenResponse r) {
    Crc32c.check("Open", "plaintext", r.getPlaintext(), r.getPlaintextCrc32C(),
        r.getVerifiedCiphertextCrc32C(), r.getVerifiedAssociatedDataCrc32C());
    return new Opened(r.getPlaintext().toByteArray(), r.getKeyVersion());
  }

  private static Rewrapped rewrapped(Data.RewrapResponse r) {
    Crc32c.check("Rewrap", "ciphertext", r.getCiphertext(), r.getCiphertextCrc32C(),
        r.getVerifiedCiphertextCrc32C(), r.getVerifiedAssociatedDataCrc32C());
    return new Rewrapped(r.getCiphertext().toByteArray(), r.getKeyVersion(),
        r.getPreviousKeyVersion());
  }

  private static <T> BatchResult<T> failed(Data.ItemError error) {
    return new BatchResult<>(null,
        Errors.fromItem(error.getCode(), error.getMessage(), error.getReasonValue()));
  }

  private static <T> List<BatchResult<T>> counted(List<BatchResult<T>> results,
      List<BatchItem> items) {
    if (results.size() != items.size()) {
      throw new SealboxException(io.grpc.Status.Code.INTERNAL, "the server answered "
          + results.size() + " results for " + items.size() + " items", null);
    }
    return results;
  }

  /** Sends {@code authorization: Bearer <token>} with the token current at each call. */
  private static final class BearerToken implements ClientInterceptor {
    private final AtomicReference<String> token;

    BearerToken(AtomicReference<String> token) {
      this.token = token;
    }

    @Override
    public <Q, A> ClientCall<Q, A> interceptCall(MethodDescriptor<Q, A> method,
        CallOptions options, Channel next) {
      return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
        @Override
        public void start(Listener<A> listener, Metadata headers) {
          String current = token.get();
          if (current != null) {
            headers.put(AUTHORIZATION, "Bearer " + current);
          }
          super.start(listener, headers);
        }
      };
    }
  }

  /** Builds a {@link SealboxClient}; every setting but the address is optional. */
  public static final class Builder {
    private final String address;
    private String token;
    private Boolean tls;
    private Path caFile;
    private Path certificateFile;
    private Path keyFile;
    private String serverName;
    private Duration deadline = DEFAULT_DEADLINE;
    private int maxAttempts = Retry.DEFAULT_MAX_ATTEMPTS;
    private Duration initialBackoff = Retry.DEFAULT_INITIAL_BACKOFF;
    private Duration maxBackoff = Retry.DEFAULT_MAX_BACKOFF;
    private boolean renew;
    private Instant expiry;
    private Consumer<RenewedToken> onRenewed;
    private final List<ClientInterceptor> interceptors = new ArrayList<>();

    private Builder(String address) {
      this.address = Objects.requireNonNull(address);
    }

    /**
     * The tenant token, sent as {@code authorization: Bearer <token>}.
     *
     * @param token the token
     * @return this builder
     */
    public Builder token(String token) {
      this.token = token;
      return this;
    }

    /**
     * Authenticates with a client certificate (mTLS) instead of a token; implies TLS.
     *
     * @param certificateFile the PEM certificate chain
     * @param keyFile its private key, PEM PKCS#8 ({@code BEGIN PRIVATE KEY})
     * @return this builder
     */
    public Builder clientCertificate(Path certificateFile, Path keyFile) {
      this.certificateFile = certificateFile;
      this.keyFile = keyFile;
      this.tls = true;
      return this;
    }

    /**
     * Trusts this CA (PEM) instead of the system roots; implies TLS.
     *
     * @param caFile the CA certificate file
     * @return this builder
     */
    public Builder caFile(Path caFile) {
      this.caFile = caFile;
      this.tls = true;
      return this;
    }

    /**
     * The name to verify the server's certificate against (and send as SNI and
     * authority), when it differs from the address's host.
     *
     * @param serverName the name in the server's certificate
     * @return this builder
     */
    public Builder serverName(String serverName) {
      this.serverName = serverName;
      return this;
    }

    /**
     * TLS even to a loopback address (the default for any other host).
     *
     * @return this builder
     */
    public Builder tls() {
      this.tls = true;
      return this;
    }

    /**
     * Plaintext even to a host that is not loopback: only on a network you trust, as
     * the CLI's {@code --insecure}.
     *
     * @return this builder
     */
    public Builder insecure() {
      this.tls = false;
      return this;
    }

    /**
     * The deadline of each unary and batch call, covering all its attempts (30 s by
     * default). Streams and files have none unless {@link SealboxClient#withDeadline}
     * gives one.
     *
     * @param deadline the deadline
     * @return this builder
     */
    public Builder deadline(Duration deadline) {
      this.deadline = Objects.requireNonNull(deadline);
      return this;
    }

    /**
     * The retry policy on UNAVAILABLE: at most maxAttempts attempts (8 by default;
     * 1 turns retries off), waiting a random time from 0 to min(maxBackoff,
     * initialBackoff * 2^n) before retry n+1 (100 ms and 2 s by default,
     * as client/contract/contract.json says).
     *
     * @param maxAttempts attempts in all, at least 1
     * @param initialBackoff the first wait's ceiling
     * @param maxBackoff the largest ceiling
     * @return this builder
     */
    public Builder retries(int maxAttempts, Duration initialBackoff, Duration maxBackoff) {
      this.maxAttempts = maxAttempts;
      this.initialBackoff = Objects.requireNonNull(initialBackoff);
      this.maxBackoff = Objects.requireNonNull(maxBackoff);
      return this;
    }

    /**
     * Renews the token before it expires: once less than a third of its life is left
     * (or at the first call when expiry is null), with RenewToken; every later call
     * uses the successor, which onRenewed is given to store.
     *
     * @param expiry when the token expires, or null if not known
     * @param onRenewed told of each successor (on the calling thread), or null
     * @return this builder
     */
    public Builder renewToken(Instant expiry, Consumer<RenewedToken> onRenewed) {
      this.renew = true;
      this.expiry = expiry;
      this.onRenewed = onRenewed;
      return this;
    }

    /**
     * Adds a gRPC interceptor to every call (for tracing, metrics, tests).
     *
     * @param interceptor the interceptor
     * @return this builder
     */
    public Builder intercept(ClientInterceptor interceptor) {
      interceptors.add(Objects.requireNonNull(interceptor));
      return this;
    }

    /**
     * Makes the client (and its channel; connecting happens at the first call).
     *
     * @return the client
     * @throws IOException when a TLS file cannot be read
     */
    public SealboxClient build() throws IOException {
      NettyChannelBuilder channel = NettyChannelBuilder.forTarget(address)
          .maxInboundMessageSize(16 << 20);
      boolean useTls = tls != null ? tls : !isLoopback(address);
      if (useTls) {
        SslContextBuilder ssl = GrpcSslContexts.forClient();
        if (caFile != null) {
          ssl.trustManager(caFile.toFile());
        }
        if (certificateFile != null) {
          ssl.keyManager(certificateFile.toFile(), keyFile.toFile());
        }
        channel.sslContext(ssl.build());
        if (serverName != null) {
          channel.overrideAuthority(serverName);
        }
      } else {
        channel.usePlaintext();
      }
      Retry retry = new Retry(maxAttempts, initialBackoff, maxBackoff);
      TokenRenewal renewal = renew ? new TokenRenewal(expiry, onRenewed) : null;
      Shared shared = new Shared(channel.build(), interceptors, token, retry, renewal);
      return new SealboxClient(shared, deadline, null);
    }

    private static boolean isLoopback(String address) {
      String host = address.startsWith("[") ? address.substring(1, address.indexOf(']'))
          : address.contains(":") ? address.substring(0, address.lastIndexOf(':')) : address;
      return host.equals("localhost") || host.startsWith("127.") || host.equals("::1");
    }
  }
}
