package sealbox

// Unit tests: what can be checked without a server. The end-to-end tests against
// the real server are tests/clients/go.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "sealbox.dev/go/sealbox/internal/sealboxv1"
)

func TestCRC32CKnownAnswer(t *testing.T) {
	// RFC 3720's check value: CRC32C("123456789") = 0xe3069283.
	if got := CRC32C([]byte("123456789")); got != 0xe3069283 {
		t.Fatalf("CRC32C = %#x", got)
	}
}

func TestAnswersWithAWrongChecksumAreRefused(t *testing.T) {
	ciphertext := []byte("sealed bytes")
	good := &pb.SealResponse{Ciphertext: ciphertext, CiphertextCrc32C: CRC32C(ciphertext),
		VerifiedPlaintextCrc32C: true, VerifiedAssociatedDataCrc32C: true}
	if err := verifySealed(good); err != nil {
		t.Fatalf("a good answer refused: %v", err)
	}
	flipped := *good
	flipped.CiphertextCrc32C ^= 1
	unconfirmed := *good
	unconfirmed.VerifiedAssociatedDataCrc32C = false
	opened := &pb.OpenResponse{Plaintext: []byte("x"), PlaintextCrc32C: CRC32C([]byte("y")),
		VerifiedCiphertextCrc32C: true, VerifiedAssociatedDataCrc32C: true}
	rewrapped := &pb.RewrapResponse{Ciphertext: ciphertext, CiphertextCrc32C: 0,
		VerifiedCiphertextCrc32C: true, VerifiedAssociatedDataCrc32C: true}
	dataKey := &pb.GenerateDataKeyResponse{Plaintext: []byte("k"), PlaintextCrc32C: 7,
		Ciphertext: ciphertext, CiphertextCrc32C: CRC32C(ciphertext),
		VerifiedAssociatedDataCrc32C: true}
	for name, err := range map[string]error{
		"seal, flipped":       verifySealed(&flipped),
		"seal, not confirmed": verifySealed(&unconfirmed),
		"seal, no answer":     verifySealed(nil),
		"open, flipped":       verifyOpened(opened),
		"rewrap, flipped":     verifyRewrapped(rewrapped),
		"data key, flipped":   verifyDataKey(dataKey),
	} {
		var checksum *ChecksumError
		if !errors.As(err, &checksum) || checksum.Code != codes.DataLoss {
			t.Errorf("%s: %v, want a ChecksumError", name, err)
		}
	}
}

func TestDecryptionFailureIsReadFromTheDetailsOnly(t *testing.T) {
	detailed, err := status.New(codes.InvalidArgument, "anything at all").WithDetails(
		&errdetails.ErrorInfo{Domain: "sealbox.v1", Reason: "DECRYPTION_FAILED"})
	if err != nil {
		t.Fatal(err)
	}
	withDetail := detailed.Err()
	var failed *DecryptionFailedError
	if err := fromRPC(withDetail); !errors.As(err, &failed) {
		t.Fatalf("with the detail: %T %v", err, err)
	}
	// The message alone means nothing.
	plain := status.Error(codes.InvalidArgument, "decryption failed")
	if err := fromRPC(plain); errors.As(err, &failed) {
		t.Fatalf("from the message: %v", err)
	}
	var invalid *InvalidArgumentError
	if err := fromRPC(plain); !errors.As(err, &invalid) {
		t.Fatalf("want an InvalidArgumentError, got %T", err)
	}
}

func TestEveryErrorIsASealboxError(t *testing.T) {
	cases := map[codes.Code]string{
		codes.Unauthenticated: "UnauthenticatedError", codes.PermissionDenied: "PermissionDeniedError",
		codes.NotFound: "NotFoundError", codes.InvalidArgument: "InvalidArgumentError",
		codes.FailedPrecondition: "FailedPreconditionError",
		codes.ResourceExhausted:  "ResourceExhaustedError", codes.Unavailable: "UnavailableError",
		codes.DeadlineExceeded: "DeadlineExceededError", codes.Internal: "SealboxError",
	}
	for code, name := range cases {
		err := fmt.Errorf("wrapped: %w", fromRPC(status.Error(code, "m")))
		var base *SealboxError
		if !errors.As(err, &base) || base.Code != code || base.Message != "m" {
			t.Errorf("%v: %v", code, err)
		}
		if got := ErrorTypeName(err); got != name {
			t.Errorf("%v: ErrorTypeName %q, want %q", code, got, name)
		}
		if status.Code(base) != code {
			t.Errorf("%v: status.Code %v", code, status.Code(base))
		}
	}
	if err := fromRPC(context.DeadlineExceeded); ErrorTypeName(err) != "DeadlineExceededError" {
		t.Errorf("a passed deadline: %T", err)
	}
	local := errors.New("disk full")
	if fromRPC(local) != local || ErrorTypeName(local) != "" {
		t.Error("the caller's own errors are not sealbox's")
	}
	if got := fromRPC(status.Error(codes.NotFound, "x")).Error(); got != "NOT_FOUND: x" {
		t.Errorf("Error() = %q", got)
	}
}

func TestBatchItemErrors(t *testing.T) {
	err := itemError(&pb.ItemError{Code: 3, Message: "decryption failed",
		Reason: pb.ErrorReason_DECRYPTION_FAILED})
	if ErrorTypeName(err) != "DecryptionFailedError" {
		t.Errorf("%T", err)
	}
	if err := itemError(&pb.ItemError{Code: 5, Message: "no key"}); ErrorTypeName(err) != "NotFoundError" {
		t.Errorf("%T", err)
	}
}

func TestBackoffCapsDoubleUpToTheMaximum(t *testing.T) {
	p := DefaultRetryPolicy
	want := []time.Duration{100, 200, 400, 800, 1600, 2000, 2000, 2000}
	for i, w := range want {
		if got := p.backoffCap(i + 1); got != w*time.Millisecond {
			t.Errorf("cap after attempt %d: %v, want %v", i+1, got, w*time.Millisecond)
		}
		for j := 0; j < 50; j++ {
			if got := p.backoff(i + 1); got < 0 || got > w*time.Millisecond {
				t.Fatalf("wait %v outside [0, %v]", got, w*time.Millisecond)
			}
		}
	}
}

func TestRetriesOnlyUnavailableWithinTheDeadline(t *testing.T) {
	p := RetryPolicy{MaxAttempts: 4, InitialBackoff: time.Millisecond}.withDefaults()
	count := func(code codes.Code) int {
		n := 0
		p.run(context.Background(), nil, func(context.Context) error { n++; return status.Error(code, "") })
		return n
	}
	if n := count(codes.Unavailable); n != 4 {
		t.Errorf("UNAVAILABLE: %d attempts, want 4", n)
	}
	for _, code := range []codes.Code{codes.InvalidArgument, codes.Internal, codes.DeadlineExceeded} {
		if n := count(code); n != 1 {
			t.Errorf("%v: %d attempts, want 1", code, n)
		}
	}
	// A wait that would end past the deadline is not waited: the error comes at once.
	slow := RetryPolicy{MaxAttempts: 5, InitialBackoff: time.Hour, MaxBackoff: time.Hour}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	started := time.Now()
	err := slow.run(ctx, nil, func(context.Context) error { return status.Error(codes.Unavailable, "") })
	if ErrorTypeName(err) != "UnavailableError" || time.Since(started) > 40*time.Millisecond {
		t.Errorf("%v after %v", err, time.Since(started))
	}
}

func TestRenewalIsDueInTheLastThirdOrWhenTheExpiryIsUnknown(t *testing.T) {
	now := time.Now()
	unknown := newTokenState("t", &TokenRenewal{})
	if !unknown.due(now) || unknown.due(now) {
		t.Error("an unknown expiry: due once, then in flight")
	}
	known := newTokenState("t", &TokenRenewal{Expiry: now.Add(30 * time.Second)})
	if known.due(now.Add(19 * time.Second)) {
		t.Error("due with 11 s of 30 left")
	}
	if !known.due(now.Add(21 * time.Second)) {
		t.Error("not due with 9 s of 30 left")
	}
	if newTokenState("t", nil).due(now) {
		t.Error("due without TokenRenewal")
	}
	stopped := newTokenState("t", &TokenRenewal{})
	stopped.due(now)
	stopped.done(true)
	if stopped.due(now) {
		t.Error("due after the token proved it cannot renew")
	}
}

func TestTransportIsPlaintextOnlyToLoopback(t *testing.T) {
	for address, want := range map[string]bool{"127.0.0.1:50051": true, "localhost:1": true,
		"[::1]:50051": true, "10.0.0.1:50051": false, "sealbox.internal:443": false,
		"unix:/run/sealbox.sock": true} {
		if isLoopback(address) != want {
			t.Errorf("isLoopback(%q) != %v", address, want)
		}
	}
	if _, err := New("10.0.0.1:1", WithInsecure(), WithCAFile("ca.pem")); err == nil {
		t.Error("WithInsecure with a TLS option accepted")
	}
}

func TestEnvelopeSegmentsRoundTripAndRefuseChanges(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	header := append([]byte{envelopeFormat, 0, 0, 0x10, 0, 1, 2, 3, 4, 5, 6, 7, 0, 49},
		make([]byte, 49)...)
	sealer, _ := newSegments(key, header)
	first, _ := sealer.seal(nil, []byte("segment zero"), false)
	last, _ := sealer.seal(nil, []byte("the end"), true)
	opener, _ := newSegments(key, header)
	if p, err := opener.open(nil, first, false); err != nil || string(p) != "segment zero" {
		t.Fatalf("%q %v", p, err)
	}
	// The last segment opened as if it were not the last: refused.
	if _, err := opener.open(nil, last, false); ErrorTypeName(err) != "DecryptionFailedError" {
		t.Errorf("a last segment taken for a middle one: %v", err)
	}
	for name, h := range map[string][]byte{
		"format": append([]byte{2}, header[1:]...),
		"short":  header[:10],
		"S":      append(append([]byte{3, 0, 0, 0x10, 1}, header[5:]...)),
		"L":      append(append(append([]byte{}, header[:12]...), 0, 20), header[14:]...),
	} {
		if _, _, err := readEnvelopeHeader(bytes.NewReader(h)); ErrorTypeName(err) != "EnvelopeFormatError" {
			t.Errorf("%s: %v", name, err)
		}
	}
}
