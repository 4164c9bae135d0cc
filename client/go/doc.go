// Package sealbox is the Go client library of sealbox, an encryption service:
// the server holds the keys, clients send plaintext over gRPC and get back
// self-describing AES-GCM ciphertexts.
//
// A Client holds one gRPC channel and is safe for concurrent use:
//
//	c, err := sealbox.New("127.0.0.1:50051", sealbox.WithToken(token))
//	sealed, err := c.Seal(ctx, "default", []byte("hello"), []byte("row-7"))
//	opened, err := c.Open(ctx, "default", sealed.Ciphertext, []byte("row-7"))
//
// What it does for every program: CRC32C checksums set on every unary and batch
// request and checked on every answer (ChecksumError); streams and files of any
// size in bounded memory (SealStream, SealFile, ...), files written beside their
// target and renamed only when complete; envelope files (SealEnvelopeFile);
// retries on UNAVAILABLE where they are safe (RetryPolicy); a token renewed
// before it expires (TokenRenewal); and an error type per case, found with
// errors.As, a failed decryption (DecryptionFailedError) recognised from the
// status details, never from the message.
//
// Import path: sealbox.dev/go/sealbox, installed into a GOPATH by
// client/go/build.sh, which generates the gRPC stubs from the .proto files (they
// are not checked in). docs/clients/GO.md is the guide; docs/CLIENTS.md the
// contract all sealbox libraries follow.
package sealbox
