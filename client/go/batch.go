package sealbox

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"

	pb "sealbox.dev/go/sealbox/internal/sealboxv1"
)

// SealItem is one item of SealBatch.
type SealItem struct {
	Key       string
	Plaintext []byte
	AAD       []byte // associated data, nil for none
}

// CiphertextItem is one item of OpenBatch or RewrapBatch.
type CiphertextItem struct {
	Key        string
	Ciphertext []byte
	AAD        []byte // the associated data given when it was sealed
}

// SealResult is one item's answer in SealBatch: Sealed, or the error that item
// alone met (as Seal would have returned it).
type SealResult struct {
	Sealed *Sealed
	Err    error
}

// OpenResult is one item's answer in OpenBatch: Opened, or the item's error (a
// *DecryptionFailedError for a ciphertext that does not authenticate).
type OpenResult struct {
	Opened *Opened
	Err    error
}

// RewrapResult is one item's answer in RewrapBatch: Rewrapped, or the item's error.
type RewrapResult struct {
	Rewrapped *Rewrapped
	Err       error
}

// SealBatch seals 1-1000 items (their plaintexts together at most the unary
// limit) in one call; the results are in the items' order, each with its own
// answer or error (one bad item never fails the others). The error is for the call
// as a whole: no items or too many, too large together, authentication.
func (c *Client) SealBatch(ctx context.Context, items []SealItem) ([]SealResult, error) {
	req := &pb.SealBatchRequest{}
	for _, item := range items {
		req.Items = append(req.Items, sealRequest(item.Key, item.Plaintext, item.AAD))
	}
	var r *pb.SealBatchResponse
	err := c.do(ctx, unaryKind, nil, func(ctx context.Context) (err error) {
		if r, err = c.crypto.SealBatch(ctx, req); err != nil {
			return err
		}
		return resultCount(len(r.Results), len(items))
	})
	if err != nil {
		return nil, err
	}
	results := make([]SealResult, len(items))
	for i, result := range r.Results {
		if e := result.GetError(); e != nil {
			results[i].Err = itemError(e)
		} else if err := verifySealed(result.GetSealed()); err != nil {
			results[i].Err = err
		} else {
			s := result.GetSealed()
			results[i].Sealed = &Sealed{Ciphertext: s.Ciphertext, KeyVersion: s.KeyVersion}
		}
	}
	return results, nil
}

// OpenBatch opens 1-1000 ciphertexts in one call, each with its own answer, as
// SealBatch. A failed authentication is that item's DecryptionFailedError.
func (c *Client) OpenBatch(ctx context.Context, items []CiphertextItem) ([]OpenResult, error) {
	req := &pb.OpenBatchRequest{}
	for _, item := range items {
		req.Items = append(req.Items, openRequest(item.Key, item.Ciphertext, item.AAD))
	}
	var r *pb.OpenBatchResponse
	err := c.do(ctx, unaryKind, nil, func(ctx context.Context) (err error) {
		if r, err = c.crypto.OpenBatch(ctx, req); err != nil {
			return err
		}
		return resultCount(len(r.Results), len(items))
	})
	if err != nil {
		return nil, err
	}
	results := make([]OpenResult, len(items))
	for i, result := range r.Results {
		if e := result.GetError(); e != nil {
			results[i].Err = itemError(e)
		} else if err := verifyOpened(result.GetOpened()); err != nil {
			results[i].Err = err
		} else {
			o := result.GetOpened()
			results[i].Opened = &Opened{Plaintext: o.Plaintext, KeyVersion: o.KeyVersion}
		}
	}
	return results, nil
}

// RewrapBatch rewraps 1-1000 ciphertexts in one call, each with its own answer,
// as SealBatch.
func (c *Client) RewrapBatch(ctx context.Context, items []CiphertextItem) ([]RewrapResult, error) {
	req := &pb.RewrapBatchRequest{}
	for _, item := range items {
		req.Items = append(req.Items, rewrapRequest(item.Key, item.Ciphertext, item.AAD))
	}
	var r *pb.RewrapBatchResponse
	err := c.do(ctx, unaryKind, nil, func(ctx context.Context) (err error) {
		if r, err = c.crypto.RewrapBatch(ctx, req); err != nil {
			return err
		}
		return resultCount(len(r.Results), len(items))
	})
	if err != nil {
		return nil, err
	}
	results := make([]RewrapResult, len(items))
	for i, result := range r.Results {
		if e := result.GetError(); e != nil {
			results[i].Err = itemError(e)
		} else if err := verifyRewrapped(result.GetRewrapped()); err != nil {
			results[i].Err = err
		} else {
			w := result.GetRewrapped()
			results[i].Rewrapped = &Rewrapped{Ciphertext: w.Ciphertext, KeyVersion: w.KeyVersion,
				PreviousKeyVersion: w.PreviousKeyVersion}
		}
	}
	return results, nil
}

// itemError is a batch item's error as the unary call would have returned it:
// the reason field plays the status details' ErrorInfo.
func itemError(e *pb.ItemError) error {
	return newError(codes.Code(e.Code), e.Message, e.Reason == pb.ErrorReason_DECRYPTION_FAILED)
}

func resultCount(got, want int) error {
	if got == want {
		return nil
	}
	return &SealboxError{Code: codes.Internal,
		Message: fmt.Sprintf("the server answered %d results for %d items", got, want)}
}
