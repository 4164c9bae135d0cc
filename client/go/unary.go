package sealbox

import (
	"context"

	pb "sealbox.dev/go/sealbox/internal/sealboxv1"
)

// Sealed is Seal's answer.
type Sealed struct {
	// Ciphertext is self-describing (docs/FORMAT.md): it names its key version, so
	// Open needs only the key name. 49 bytes longer than the plaintext.
	Ciphertext []byte
	// KeyVersion is the key version it was sealed under.
	KeyVersion uint32
}

// Opened is Open's answer.
type Opened struct {
	// Plaintext is the decrypted data.
	Plaintext []byte
	// KeyVersion is the key version named in the ciphertext.
	KeyVersion uint32
}

// Rewrapped is Rewrap's answer.
type Rewrapped struct {
	// Ciphertext is the same plaintext sealed under the key's primary version.
	Ciphertext []byte
	// KeyVersion is the new ciphertext's key version.
	KeyVersion uint32
	// PreviousKeyVersion is the given ciphertext's key version.
	PreviousKeyVersion uint32
}

// DataKey is GenerateDataKey's answer.
type DataKey struct {
	// Plaintext is the raw key (16 or 32 bytes), only when asked for; wipe it after
	// use.
	Plaintext []byte
	// Ciphertext is the data key sealed under the named key: a unary ciphertext,
	// opened with Open (given the same associated data).
	Ciphertext []byte
	// KeyVersion is the key version it was sealed under.
	KeyVersion uint32
}

// DataKeyOptions are GenerateDataKey's choices.
type DataKeyOptions struct {
	// Size is the data key's length in bytes: 32 (AES-256, also for 0) or 16.
	Size int
	// IncludePlaintext also returns the key in the clear, to encrypt with now;
	// without it, only sealed (to store, and open when needed).
	IncludePlaintext bool
}

// Seal encrypts plaintext (at most the server's unary limit, 1 MiB by default;
// SealStream for more) under the key's primary version, bound to the associated
// data aad (nil for none), which Open must be given again.
func (c *Client) Seal(ctx context.Context, key string, plaintext, aad []byte) (*Sealed, error) {
	var r *pb.SealResponse
	err := c.do(ctx, unaryKind, nil, func(ctx context.Context) (err error) {
		if r, err = c.crypto.Seal(ctx, sealRequest(key, plaintext, aad)); err != nil {
			return err
		}
		return verifySealed(r)
	})
	if err != nil {
		return nil, err
	}
	return &Sealed{Ciphertext: r.Ciphertext, KeyVersion: r.KeyVersion}, nil
}

// Open decrypts a ciphertext from Seal or Rewrap. A ciphertext that does not
// authenticate (wrong key, other aad, changed or truncated) is a
// DecryptionFailedError.
func (c *Client) Open(ctx context.Context, key string, ciphertext, aad []byte) (*Opened, error) {
	var r *pb.OpenResponse
	err := c.do(ctx, unaryKind, nil, func(ctx context.Context) (err error) {
		if r, err = c.crypto.Open(ctx, openRequest(key, ciphertext, aad)); err != nil {
			return err
		}
		return verifyOpened(r)
	})
	if err != nil {
		return nil, err
	}
	return &Opened{Plaintext: r.Plaintext, KeyVersion: r.KeyVersion}, nil
}

// Rewrap re-encrypts a ciphertext under the key's primary version without
// returning the plaintext (after a rotation). Errors: those of Open and Seal.
func (c *Client) Rewrap(ctx context.Context, key string, ciphertext, aad []byte) (*Rewrapped, error) {
	var r *pb.RewrapResponse
	err := c.do(ctx, unaryKind, nil, func(ctx context.Context) (err error) {
		if r, err = c.crypto.Rewrap(ctx, rewrapRequest(key, ciphertext, aad)); err != nil {
			return err
		}
		return verifyRewrapped(r)
	})
	if err != nil {
		return nil, err
	}
	return &Rewrapped{Ciphertext: r.Ciphertext, KeyVersion: r.KeyVersion,
		PreviousKeyVersion: r.PreviousKeyVersion}, nil
}

// GenerateDataKey returns a fresh random data key for envelope encryption, sealed
// under key and bound to aad (and in the clear too with IncludePlaintext).
func (c *Client) GenerateDataKey(ctx context.Context, key string, aad []byte,
	opts DataKeyOptions) (*DataKey, error) {
	var r *pb.GenerateDataKeyResponse
	err := c.do(ctx, unaryKind, nil, func(ctx context.Context) (err error) {
		r, err = c.crypto.GenerateDataKey(ctx, &pb.GenerateDataKeyRequest{
			Key: key, DataKeyBytes: uint32(opts.Size), AssociatedData: aad,
			IncludePlaintext: opts.IncludePlaintext, AssociatedDataCrc32C: checksum(aad)})
		if err != nil {
			return err
		}
		if err = verifyDataKey(r); err != nil {
			wipe(r.Plaintext)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &DataKey{Plaintext: r.Plaintext, Ciphertext: r.Ciphertext, KeyVersion: r.KeyVersion}, nil
}

// wipe zeroes key bytes once they are no longer needed. Go keeps copies it cannot
// reach (gRPC's buffers, an AES key schedule): it narrows the window, no more.
func wipe(b []byte) {
	for i := range b {
		b[i] = 0
	}
}
