package sealbox

import (
	"context"
	"fmt"
	"io"

	pb "sealbox.dev/go/sealbox/internal/sealboxv1"
)

// DefaultChunkSize is how many input bytes each stream message carries.
const DefaultChunkSize = 256 << 10

// StreamOption configures SealStream, OpenStream, the files and envelope files.
type StreamOption func(*streamSettings)

type streamSettings struct {
	segmentSize int
	chunkSize   int
	progress    func(done, total int64)
	total       int64 // the input's size when known (a file), else -1
}

func newStreamSettings(opts []StreamOption) streamSettings {
	s := streamSettings{chunkSize: DefaultChunkSize, total: -1}
	for _, opt := range opts {
		opt(&s)
	}
	return s
}

// WithSegmentSize sets the plaintext bytes per segment of a SealStream (a power of
// two from 4 KiB to 4 MiB; 0, the default, is the server's 64 KiB). Larger
// segments cost less overhead (16 bytes each) and more memory on both sides.
func WithSegmentSize(n int) StreamOption { return func(s *streamSettings) { s.segmentSize = n } }

// WithChunkSize sets how many input bytes each message carries (DefaultChunkSize,
// 256 KiB; at most 4 MiB). It does not change the output.
func WithChunkSize(n int) StreamOption { return func(s *streamSettings) { s.chunkSize = n } }

// WithProgress calls f after each chunk of input is sent (or, for envelope
// files, each segment is done) with the input bytes done so far and the input's
// size (-1 when not known: a reader that is not a file). It is called from one
// goroutine at a time; a retried stream starts again from 0.
func WithProgress(f func(done, total int64)) StreamOption {
	return func(s *streamSettings) { s.progress = f }
}

func withTotal(total int64) StreamOption { return func(s *streamSettings) { s.total = total } }

// StreamResult describes a finished stream, file or envelope file.
type StreamResult struct {
	// KeyVersion is the key version the data was (or had been) sealed under.
	KeyVersion uint32
	// BytesIn and BytesOut are the bytes read from the input and written out.
	BytesIn, BytesOut int64
}

// SealStream encrypts everything r holds into a stream ciphertext written to w,
// through the SealStream call, in memory bounded by a few chunks whatever the
// size. aad (nil for none) is bound to the whole stream. The output is complete
// only when SealStream returns nil; on an error, discard what w received. Retried
// on UNAVAILABLE only before the first answer, and only when r is an io.Seeker
// (it is sought back to where it was). No default deadline: ctx bounds the call.
func (c *Client) SealStream(ctx context.Context, key string, aad []byte, r io.Reader,
	w io.Writer, opts ...StreamOption) (*StreamResult, error) {
	s := newStreamSettings(opts)
	start := &pb.StreamStart{Key: key, AssociatedData: aad, SegmentSize: uint32(s.segmentSize)}
	return c.stream(ctx, r, w, s, func(ctx context.Context) (streamCall, error) {
		call, err := c.crypto.SealStream(ctx)
		if err != nil {
			return nil, err
		}
		return sealStreamCall{call, start}, nil
	})
}

// OpenStream decrypts a stream ciphertext from SealStream read from r, writing
// the plaintext to w one verified segment at a time. The whole stream verified
// only when OpenStream returns nil: on any error (a *DecryptionFailedError for a
// changed, truncated, extended or reordered stream, or the wrong key or aad)
// discard everything w received, as OpenFile does. Retried as SealStream.
func (c *Client) OpenStream(ctx context.Context, key string, aad []byte, r io.Reader,
	w io.Writer, opts ...StreamOption) (*StreamResult, error) {
	s := newStreamSettings(opts)
	start := &pb.StreamStart{Key: key, AssociatedData: aad}
	return c.stream(ctx, r, w, s, func(ctx context.Context) (streamCall, error) {
		call, err := c.crypto.OpenStream(ctx)
		if err != nil {
			return nil, err
		}
		return openStreamCall{call, start}, nil
	})
}

// streamCall is what SealStream and OpenStream have in common.
type streamCall interface {
	sendStart() error
	sendChunk([]byte) error
	CloseSend() error
	recv() (chunk []byte, keyVersion uint32, err error)
}

type sealStreamCall struct {
	pb.Crypto_SealStreamClient
	start *pb.StreamStart
}

func (s sealStreamCall) sendStart() error {
	return s.Send(&pb.SealStreamRequest{Message: &pb.SealStreamRequest_Start{Start: s.start}})
}

func (s sealStreamCall) sendChunk(b []byte) error {
	return s.Send(&pb.SealStreamRequest{Message: &pb.SealStreamRequest_PlaintextChunk{PlaintextChunk: b}})
}

func (s sealStreamCall) recv() ([]byte, uint32, error) {
	r, err := s.Recv()
	return r.GetCiphertextChunk(), r.GetKeyVersion(), err
}

type openStreamCall struct {
	pb.Crypto_OpenStreamClient
	start *pb.StreamStart
}

func (s openStreamCall) sendStart() error {
	return s.Send(&pb.OpenStreamRequest{Message: &pb.OpenStreamRequest_Start{Start: s.start}})
}

func (s openStreamCall) sendChunk(b []byte) error {
	return s.Send(&pb.OpenStreamRequest{Message: &pb.OpenStreamRequest_CiphertextChunk{CiphertextChunk: b}})
}

func (s openStreamCall) recv() ([]byte, uint32, error) {
	r, err := s.Recv()
	return r.GetPlaintextChunk(), r.GetKeyVersion(), err
}

// localError is a failure on this side of a stream (reading the input, writing
// the output): returned as it is, never retried.
type localError struct{ err error }

func (e localError) Error() string { return e.err.Error() }

// stream runs a stream call with its retries: each attempt starts the input
// again from where it was, which only a Seeker can do, and none follows an
// attempt that already wrote output.
func (c *Client) stream(ctx context.Context, r io.Reader, w io.Writer, s streamSettings,
	open func(context.Context) (streamCall, error)) (*StreamResult, error) {
	if s.chunkSize <= 0 || s.chunkSize > 4<<20 {
		return nil, fmt.Errorf("sealbox: chunk size %d, want 1 byte to 4 MiB", s.chunkSize)
	}
	seeker, rewindable := r.(io.Seeker)
	var origin int64
	if rewindable {
		var err error
		if origin, err = seeker.Seek(0, io.SeekCurrent); err != nil {
			rewindable = false // a pipe is a *os.File too
		}
	}
	var result StreamResult
	answered, attempts := false, 0
	err := c.do(ctx, streamKind, func() bool { return rewindable && !answered },
		func(ctx context.Context) error {
			attempts++
			if attempts > 1 {
				if _, err := seeker.Seek(origin, io.SeekStart); err != nil {
					return fmt.Errorf("sealbox: reading the input again: %w", err)
				}
			}
			result = StreamResult{}
			err := pump(ctx, open, r, w, s, &result, &answered)
			if l, ok := err.(localError); ok {
				return l.err // not gRPC's: returned as it is, never retried
			}
			return err
		})
	if err != nil {
		return nil, err
	}
	return &result, nil
}

// pump runs one attempt: a goroutine sends the start message and the input in
// chunks, then half-closes, while this one writes the answers out as they arrive
// (the server answers segment by segment and stalls when nobody reads). gRPC's
// flow control bounds what is in flight, so memory stays at a few chunks.
func pump(ctx context.Context, open func(context.Context) (streamCall, error), r io.Reader,
	w io.Writer, s streamSettings, result *StreamResult, answered *bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // also stops a sender still blocked when the call fails
	call, err := open(ctx)
	if err != nil {
		return err
	}
	sent := make(chan error, 1)
	var bytesIn int64
	go func() { sent <- send(call, r, s, &bytesIn, cancel) }()

	var received error
	for {
		chunk, version, err := call.recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			received = err
			cancel() // a sender still blocked gives up
			break
		}
		*answered = true
		result.KeyVersion = version
		if _, err := w.Write(chunk); err != nil {
			cancel()
			<-sent
			return localError{fmt.Errorf("sealbox: writing the output: %w", err)}
		}
		result.BytesOut += int64(len(chunk))
	}
	sendErr := <-sent
	if _, ok := sendErr.(localError); ok {
		return sendErr // the input failed, and the call was cancelled for it
	}
	if received != nil {
		return received
	}
	result.BytesIn = bytesIn
	return sendErr
}

// send writes the start message, the input in chunks (one buffer, reused: Send
// has encoded a message by the time it returns) and the half-close.
func send(call streamCall, r io.Reader, s streamSettings, done *int64,
	cancel context.CancelFunc) error {
	err := call.sendStart()
	buffer := make([]byte, s.chunkSize)
	for err == nil {
		n, readErr := io.ReadFull(r, buffer)
		if n > 0 {
			if err = call.sendChunk(buffer[:n]); err != nil {
				break
			}
			*done += int64(n)
			if s.progress != nil {
				s.progress(*done, s.total)
			}
		}
		if readErr == io.EOF || readErr == io.ErrUnexpectedEOF {
			err = call.CloseSend()
			break
		}
		if readErr != nil {
			cancel()
			return localError{fmt.Errorf("sealbox: reading the input: %w", readErr)}
		}
	}
	if err == io.EOF {
		return nil // the server ended the call early: recv returns why
	}
	return err
}
