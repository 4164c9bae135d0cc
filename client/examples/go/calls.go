package main

// The unary calls, with CRC32C checksums both ways: each request carries the
// checksum of its payload and associated data, which the server checks before any
// work, and each answer's output is checked against the checksum the server sent.
// A byte flipped anywhere between this process's memory and the server's is then
// an error, never data.

import (
	"context"
	"fmt"
	"hash/crc32"
	"strings"
	"time"
	"unicode"

	"github.com/golang/protobuf/ptypes/wrappers"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "sealbox.example/sealboxv1"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// checksum is a request's CRC32C field: a wrapper message, so that 0 is a checksum
// too and a missing field means "not given".
func checksum(b []byte) *wrappers.UInt32Value { return &wrappers.UInt32Value{Value: crc32c(b)} }

// client calls one key of the caller's tenant; each call gets its own deadline.
type client struct {
	crypto  pb.CryptoClient
	key     string
	timeout time.Duration
}

func (c *client) sealRequest(plaintext, aad []byte) *pb.SealRequest {
	return &pb.SealRequest{
		Key: c.key, Plaintext: plaintext, AssociatedData: aad,
		PlaintextCrc32C: checksum(plaintext), AssociatedDataCrc32C: checksum(aad),
	}
}

func (c *client) openRequest(ciphertext, aad []byte) *pb.OpenRequest {
	return &pb.OpenRequest{
		Key: c.key, Ciphertext: ciphertext, AssociatedData: aad,
		CiphertextCrc32C: checksum(ciphertext), AssociatedDataCrc32C: checksum(aad),
	}
}

func (c *client) seal(ctx context.Context, plaintext, aad []byte) (*pb.SealResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	r, err := c.crypto.Seal(ctx, c.sealRequest(plaintext, aad))
	if err != nil {
		return nil, callError("Seal", err)
	}
	return r, checkSealed("Seal", r)
}

func (c *client) open(ctx context.Context, ciphertext, aad []byte) (*pb.OpenResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	r, err := c.crypto.Open(ctx, c.openRequest(ciphertext, aad))
	if err != nil {
		return nil, callError("Open", err)
	}
	return r, checkOpened("Open", r)
}

// checkSealed: the server checked both of the request's checksums, and the
// ciphertext arrived as the server sent it.
func checkSealed(call string, r *pb.SealResponse) error {
	if !r.VerifiedPlaintextCrc32C || !r.VerifiedAssociatedDataCrc32C {
		return fmt.Errorf("%s: the server did not verify the request's checksums", call)
	}
	if crc32c(r.Ciphertext) != r.CiphertextCrc32C {
		return fmt.Errorf("%s: checksum mismatch: the ciphertext was damaged on the way", call)
	}
	return nil
}

func checkOpened(call string, r *pb.OpenResponse) error {
	if !r.VerifiedCiphertextCrc32C || !r.VerifiedAssociatedDataCrc32C {
		return fmt.Errorf("%s: the server did not verify the request's checksums", call)
	}
	if crc32c(r.Plaintext) != r.PlaintextCrc32C {
		return fmt.Errorf("%s: checksum mismatch: the plaintext was damaged on the way", call)
	}
	return nil
}

// NewDataKey and OpenDataKey make the client the envelope package's Keys: a fresh
// AES-256 data key from GenerateDataKey, and the opening of a sealed one with Open.
func (c *client) NewDataKey(ctx context.Context, aad []byte) (key, sealed []byte, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	r, err := c.crypto.GenerateDataKey(ctx, &pb.GenerateDataKeyRequest{
		Key: c.key, DataKeyBytes: 32, AssociatedData: aad, IncludePlaintext: true,
		AssociatedDataCrc32C: checksum(aad),
	})
	if err != nil {
		return nil, nil, callError("GenerateDataKey", err)
	}
	switch {
	case !r.VerifiedAssociatedDataCrc32C:
		err = fmt.Errorf("GenerateDataKey: the server did not verify the request's checksum")
	case crc32c(r.Plaintext) != r.PlaintextCrc32C || crc32c(r.Ciphertext) != r.CiphertextCrc32C:
		err = fmt.Errorf("GenerateDataKey: checksum mismatch: the data key was damaged on the way")
	}
	if err != nil {
		wipe(r.Plaintext)
		return nil, nil, err
	}
	return r.Plaintext, r.Ciphertext, nil
}

func (c *client) OpenDataKey(ctx context.Context, sealed, aad []byte) ([]byte, error) {
	r, err := c.open(ctx, sealed, aad)
	if err != nil {
		if r != nil {
			wipe(r.Plaintext)
		}
		return nil, err
	}
	return r.Plaintext, nil
}

func wipe(b []byte) {
	for i := range b {
		b[i] = 0
	}
}

// callError reads like the other example clients' errors:
// "Seal failed: NOT_FOUND: no key ...".
func callError(call string, err error) error {
	s := status.Convert(err)
	return fmt.Errorf("%s failed: %s: %s", call, codeName(s.Code()), s.Message())
}

// codeName spells a status code as the .proto files and the other clients do
// (NOT_FOUND), not as Go's String does (NotFound).
func codeName(c codes.Code) string {
	var b strings.Builder
	lower := false // whether the previous letter was lower case: a word ends there
	for _, r := range c.String() {
		if lower && unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		lower = unicode.IsLower(r)
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}
