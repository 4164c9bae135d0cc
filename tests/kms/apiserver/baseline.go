package main

// The yardstick for bench: the same seeds through sealbox's own unary Seal and Open
// over TCP (sealbox.v1.Crypto, a bearer token), from this process, with the same
// callers and timeout as the Decrypts, so that the two rates compare like for like.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	sealboxv1 "apiserver.standin/sealboxv1"
)

type unaryBaseline struct {
	conn    *grpc.ClientConn
	crypto  sealboxv1.CryptoClient
	token   string
	key     string
	timeout time.Duration
}

// dialBaseline connects to sealbox's TCP listener (plaintext: loopback only).
func dialBaseline(address, tokenFile, key string, timeout time.Duration) (*unaryBaseline, error) {
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		return nil, err
	}
	conn, err := grpc.Dial(address, grpc.WithInsecure(), grpc.WithDefaultCallOptions(grpc.WaitForReady(true)))
	if err != nil {
		return nil, err
	}
	return &unaryBaseline{conn: conn, crypto: sealboxv1.NewCryptoClient(conn),
		token: strings.TrimSpace(string(token)), key: key, timeout: timeout}, nil
}

func (b *unaryBaseline) context() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+b.token), cancel
}

func (b *unaryBaseline) seal(plaintext []byte) ([]byte, error) {
	ctx, cancel := b.context()
	defer cancel()
	r, err := b.crypto.Seal(ctx, &sealboxv1.SealRequest{Key: b.key, Plaintext: plaintext})
	if err != nil {
		return nil, fmt.Errorf("Seal: %w", err)
	}
	return r.Ciphertext, nil
}

func (b *unaryBaseline) open(ciphertext []byte) ([]byte, error) {
	ctx, cancel := b.context()
	defer cancel()
	r, err := b.crypto.Open(ctx, &sealboxv1.OpenRequest{Key: b.key, Ciphertext: ciphertext})
	if err != nil {
		return nil, fmt.Errorf("Open: %w", err)
	}
	return r.Plaintext, nil
}
