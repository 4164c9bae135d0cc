package dev.sealbox.client;

import com.google.protobuf.ByteString;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayDeque;
import java.util.function.Function;

/**
 * Runs one SealStream or OpenStream call from an InputStream to an OutputStream in
 * bounded memory, on the caller's thread.
 *
 * <p>Both directions are flow-controlled: a chunk is read from the input only when
 * gRPC is ready to send it (about one chunk buffered), and the next answer is
 * requested only once the last one was written out (one answer buffered). The
 * caller's thread waits for whichever comes first, so a server that answers while
 * the client sends (the streams' read-answer-read protocol) never deadlocks it.
 *
 * @param <Req> the request message
 * @param <Resp> the response message
 */
final class StreamPump<Req, Resp> implements ClientResponseObserver<Req, Resp> {
  /** Bytes per request message: well under the 4 MiB message limit. */
  static final int CHUNK = 256 * 1024;

  private final Object lock = new Object();
  private final ArrayDeque<Resp> answers = new ArrayDeque<>();
  private ClientCallStreamObserver<Req> requests;
  private boolean finished;
  private Throwable failure;
  private boolean answered;

  @Override
  public void beforeStart(ClientCallStreamObserver<Req> requests) {
    this.requests = requests;
    requests.disableAutoRequestWithInitial(1);
    requests.setOnReadyHandler(this::wake);
  }

  @Override
  public void onNext(Resp answer) {
    synchronized (lock) {
      answers.add(answer);
      lock.notifyAll();
    }
  }

  @Override
  public void onError(Throwable t) {
    synchronized (lock) {
      failure = t;
      finished = true;
      lock.notifyAll();
    }
  }

  @Override
  public void onCompleted() {
    synchronized (lock) {
      finished = true;
      lock.notifyAll();
    }
  }

  private void wake() {
    synchronized (lock) {
      lock.notifyAll();
    }
  }

  /** Whether any answer arrived (after which the call is never retried). */
  boolean answered() {
    return answered;
  }

  /**
   * Starts the call with open (the async stub's method, given this as the response
   * observer), sends start, then the input in chunks, writing every answer's payload
   * to out. Returns the input bytes sent. Throws the call's error as a
   * SealboxException (the output then holds a prefix to discard), or the caller's
   * own IOException (the call is then cancelled).
   */
  long run(Function<StreamObserver<Resp>, StreamObserver<Req>> open, Req start,
      Function<ByteString, Req> chunk, Function<Resp, ByteString> payload, InputStream in,
      OutputStream out, Progress progress, long total) throws IOException {
    open.apply(this);
    boolean done = false;
    try {
      requests.onNext(start);
      byte[] buffer = new byte[CHUNK];
      boolean inputDone = false;
      long sent = 0;
      while (true) {
        Resp answer;
        boolean callOver;
        synchronized (lock) {
          while (answers.isEmpty() && !finished && (inputDone || !requests.isReady())) {
            lock.wait();
          }
          answer = answers.poll();
          callOver = finished;
        }
        if (answer != null) {
          answered = true;
          payload.apply(answer).writeTo(out);
          requests.request(1);
        } else if (callOver) {
          done = true;
          if (failure != null) {
            throw failure instanceof StatusRuntimeException
                ? Errors.fromGrpc((StatusRuntimeException) failure)
                : new SealboxException(io.grpc.Status.Code.UNKNOWN, failure.toString(), failure);
          }
          if (!inputDone) {
            throw new SealboxException(io.grpc.Status.Code.INTERNAL,
                "the server ended the stream before the input did", null);
          }
          return sent;
        } else {
          int n = in.readNBytes(buffer, 0, CHUNK);
          if (n > 0) {
            requests.onNext(chunk.apply(ByteString.copyFrom(buffer, 0, n)));
            sent += n;
            if (progress != null) {
              progress.update(sent, total);
            }
          }
          if (n < CHUNK) {
            requests.onCompleted();
            inputDone = true;
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SealboxException(io.grpc.Status.Code.CANCELLED, "interrupted", e);
    } finally {
      if (!done) {
        requests.cancel("the client gave up", null);
      }
    }
  }
}
