package main

// The demo: each kind of call once, checked, with a line of output per step.

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"

	"google.golang.org/grpc/codes"

	pb "sealbox.example/sealboxv1"
)

func demo(ctx context.Context, c *client) error {
	if err := demoUnary(ctx, c); err != nil {
		return err
	}
	if err := demoStream(ctx, c); err != nil {
		return err
	}
	return demoBatch(ctx, c)
}

// demoUnary: small values such as database fields, with checksums both ways.
func demoUnary(ctx context.Context, c *client) error {
	message, aad := []byte("hello from go"), []byte("row-7")
	sealed, err := c.seal(ctx, message, aad)
	if err != nil {
		return err
	}
	opened, err := c.open(ctx, sealed.Ciphertext, aad)
	if err != nil {
		return err
	}
	if !bytes.Equal(opened.Plaintext, message) {
		return errors.New("Open returned different bytes than were sealed")
	}
	fmt.Printf("unary: sealed %d bytes under version %d, opened OK, CRC32C checked both ways\n",
		len(sealed.Ciphertext), sealed.KeyVersion)
	return nil
}

// demoStream: any size, sent in chunks of any size, through SealStream and back
// through OpenStream.
func demoStream(ctx context.Context, c *client) error {
	payload := make([]byte, 3<<20+5)
	if _, err := rand.Read(payload); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel() // also stops a sender still blocked when a call fails

	start := &pb.StreamStart{Key: c.key}
	seal, err := c.crypto.SealStream(ctx)
	if err != nil {
		return callError("SealStream", err)
	}
	ciphertext, err := exchange(payload, 100_000,
		func() error {
			return seal.Send(&pb.SealStreamRequest{Message: &pb.SealStreamRequest_Start{Start: start}})
		},
		func(chunk []byte) error {
			return seal.Send(&pb.SealStreamRequest{
				Message: &pb.SealStreamRequest_PlaintextChunk{PlaintextChunk: chunk}})
		},
		seal.CloseSend,
		func() ([]byte, error) {
			r, err := seal.Recv()
			return r.GetCiphertextChunk(), err
		})
	if err != nil {
		return callError("SealStream", err)
	}

	open, err := c.crypto.OpenStream(ctx)
	if err != nil {
		return callError("OpenStream", err)
	}
	plaintext, err := exchange(ciphertext, 65_536,
		func() error {
			return open.Send(&pb.OpenStreamRequest{Message: &pb.OpenStreamRequest_Start{Start: start}})
		},
		func(chunk []byte) error {
			return open.Send(&pb.OpenStreamRequest{
				Message: &pb.OpenStreamRequest_CiphertextChunk{CiphertextChunk: chunk}})
		},
		open.CloseSend,
		func() ([]byte, error) {
			r, err := open.Recv()
			return r.GetPlaintextChunk(), err
		})
	if err != nil {
		return callError("OpenStream", err)
	}
	if !bytes.Equal(plaintext, payload) {
		return errors.New("OpenStream returned different bytes than were sealed")
	}
	fmt.Printf("stream: %d bytes -> %d bytes and back, OK\n", len(payload), len(ciphertext))
	return nil
}

// exchange runs one bidirectional stream: it sends the start message, then data in
// chunks of chunkSize from a goroutine, then half-closes, while it reads the
// answers (the server answers segment by segment, and stalls if nobody reads). It
// returns the answers' bytes once the call ended OK; on an error they are void.
func exchange(data []byte, chunkSize int, start func() error, send func([]byte) error,
	closeSend func() error, recv func() ([]byte, error)) ([]byte, error) {
	sent := make(chan error, 1)
	go func() {
		err := start()
		for len(data) > 0 && err == nil {
			n := chunkSize
			if n > len(data) {
				n = len(data)
			}
			err, data = send(data[:n]), data[n:]
		}
		if err == nil {
			err = closeSend()
		}
		if err == io.EOF {
			err = nil // the server ended the call early: recv returns why
		}
		sent <- err
	}()

	var out []byte
	for {
		chunk, err := recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		out = append(out, chunk...)
	}
	if err := <-sent; err != nil {
		return nil, err
	}
	return out, nil
}

// demoBatch: several small values in one SealBatch call, one of them for a key the
// tenant does not have. That item alone fails; the others are sealed, then opened
// again in one OpenBatch call.
func demoBatch(ctx context.Context, c *client) error {
	aad := []byte("batch")
	plaintexts := [][]byte{[]byte("alpha"), []byte("bravo"), []byte("charlie"), []byte("delta")}
	const bad = 2
	missing := c.key + "-missing"
	var sealReq pb.SealBatchRequest
	for i, p := range plaintexts {
		item := c.sealRequest(p, aad)
		if i == bad {
			item.Key = missing
		}
		sealReq.Items = append(sealReq.Items, item)
	}
	callCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	sealed, err := c.crypto.SealBatch(callCtx, &sealReq)
	if err != nil {
		return callError("SealBatch", err)
	}
	if len(sealed.Results) != len(plaintexts) {
		return fmt.Errorf("SealBatch: %d results for %d items", len(sealed.Results), len(plaintexts))
	}

	var openReq pb.OpenBatchRequest
	var want [][]byte // the plaintexts of the items sealed, in order
	for i, result := range sealed.Results {
		if e := result.GetError(); e != nil {
			fmt.Printf("batch: item %d: %s: %s\n", i, codeName(codes.Code(e.Code)), e.Message)
			if i != bad {
				return fmt.Errorf("SealBatch: item %d failed", i)
			}
			continue
		}
		r := result.GetSealed()
		if i == bad {
			return fmt.Errorf("SealBatch: item %d, for key %q, should have failed", i, missing)
		}
		if err := checkSealed(fmt.Sprintf("SealBatch item %d", i), r); err != nil {
			return err
		}
		fmt.Printf("batch: item %d: sealed %d bytes under version %d\n", i, len(r.Ciphertext), r.KeyVersion)
		openReq.Items = append(openReq.Items, c.openRequest(r.Ciphertext, aad))
		want = append(want, plaintexts[i])
	}

	opened, err := c.crypto.OpenBatch(callCtx, &openReq)
	if err != nil {
		return callError("OpenBatch", err)
	}
	if len(opened.Results) != len(want) {
		return fmt.Errorf("OpenBatch: %d results for %d items", len(opened.Results), len(want))
	}
	for i, result := range opened.Results {
		if e := result.GetError(); e != nil {
			return fmt.Errorf("OpenBatch: item %d failed: %s: %s", i, codeName(codes.Code(e.Code)), e.Message)
		}
		r := result.GetOpened()
		if err := checkOpened(fmt.Sprintf("OpenBatch item %d", i), r); err != nil {
			return err
		}
		if !bytes.Equal(r.Plaintext, want[i]) {
			return fmt.Errorf("OpenBatch: item %d returned different bytes than were sealed", i)
		}
	}
	fmt.Printf("batch: %d of %d items sealed (item %d's key does not exist), opened again with OpenBatch, OK\n",
		len(want), len(plaintexts), bad)
	return nil
}
