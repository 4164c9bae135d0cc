// Command driver runs the sealbox Go library against a real server for
// go_client_test.py, one scenario per command; it prints a line per check and
// exits 1 at the first that fails. The server is $SEALBOX_SERVER, the token
// $SEALBOX_TOKEN.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golang/protobuf/ptypes/wrappers"
	"google.golang.org/grpc"

	"sealbox.dev/go/sealbox"
)

var ctx = context.Background()

func main() {
	commands := map[string]func([]string) error{
		"calls": calls, "files": files, "gap": gap, "renew": renew, "tls": mtls,
	}
	run, ok := commands[os.Args[1]]
	if !ok {
		fail(fmt.Errorf("unknown command %q", os.Args[1]))
	}
	if err := run(os.Args[2:]); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "driver: %s: %v\n", sealbox.ErrorTypeName(err), err)
	os.Exit(1)
}

func client(opts ...sealbox.Option) *sealbox.Client {
	c, err := sealbox.New(os.Getenv("SEALBOX_SERVER"),
		append([]sealbox.Option{sealbox.WithToken(os.Getenv("SEALBOX_TOKEN"))}, opts...)...)
	if err != nil {
		fail(err)
	}
	return c
}

func check(what string, ok bool) error {
	if !ok {
		return errors.New("FAILED: " + what)
	}
	fmt.Println("ok", what)
	return nil
}

// wantError checks that err is of the library's error type named.
func wantError(what string, err error, name string) error {
	if got := sealbox.ErrorTypeName(err); got != name {
		return fmt.Errorf("FAILED: %s: %s (%v), want %s", what, got, err, name)
	}
	fmt.Printf("ok %s: %s: %v\n", what, name, err)
	return nil
}

func flip(b []byte, at int) []byte {
	c := append([]byte{}, b...)
	c[at] ^= 1
	return c
}

func random(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// calls: every call of the library once, its errors, and tampered inputs.
func calls([]string) error {
	c := client()
	defer c.Close()
	aad := []byte("row-7")

	sealed, err := c.Seal(ctx, "default", []byte("hello from go"), aad)
	if err != nil {
		return err
	}
	opened, err := c.Open(ctx, "default", sealed.Ciphertext, aad)
	if err != nil {
		return err
	}
	if err := check("Seal and Open", string(opened.Plaintext) == "hello from go" &&
		len(sealed.Ciphertext) == 13+49 && opened.KeyVersion == sealed.KeyVersion); err != nil {
		return err
	}
	rewrapped, err := c.Rewrap(ctx, "default", sealed.Ciphertext, aad)
	if err != nil {
		return err
	}
	again, err := c.Open(ctx, "default", rewrapped.Ciphertext, aad)
	if err != nil {
		return err
	}
	if err := check("Rewrap", string(again.Plaintext) == "hello from go" &&
		rewrapped.PreviousKeyVersion == sealed.KeyVersion); err != nil {
		return err
	}

	_, err = c.Open(ctx, "default", flip(sealed.Ciphertext, 40), aad)
	if err := wantError("Open of a tampered ciphertext", err, "DecryptionFailedError"); err != nil {
		return err
	}
	_, err = c.Open(ctx, "default", sealed.Ciphertext, []byte("row-8"))
	if err := wantError("Open with other associated data", err, "DecryptionFailedError"); err != nil {
		return err
	}
	_, err = c.Seal(ctx, "missing", []byte("x"), nil)
	if err := wantError("Seal under a key that does not exist", err, "NotFoundError"); err != nil {
		return err
	}
	_, err = c.Seal(ctx, "bad key name!", []byte("x"), nil)
	if err := wantError("Seal under an invalid key name", err, "InvalidArgumentError"); err != nil {
		return err
	}
	stranger := client(sealbox.WithToken("not-a-token"))
	_, err = stranger.Seal(ctx, "default", []byte("x"), nil)
	stranger.Close()
	if err := wantError("Seal with an unknown token", err, "UnauthenticatedError"); err != nil {
		return err
	}
	var base *sealbox.SealboxError
	if err := check("errors.As finds the base SealboxError", errors.As(err, &base) &&
		base.Message != ""); err != nil {
		return err
	}

	if err := batches(c); err != nil {
		return err
	}

	dataKey, err := c.GenerateDataKey(ctx, "default", aad, sealbox.DataKeyOptions{IncludePlaintext: true})
	if err != nil {
		return err
	}
	openedKey, err := c.Open(ctx, "default", dataKey.Ciphertext, aad)
	if err != nil {
		return err
	}
	sealedOnly, err := c.GenerateDataKey(ctx, "default", nil, sealbox.DataKeyOptions{Size: 16})
	if err != nil {
		return err
	}
	if err := check("GenerateDataKey", len(dataKey.Plaintext) == 32 &&
		bytes.Equal(openedKey.Plaintext, dataKey.Plaintext) && sealedOnly.Plaintext == nil &&
		len(sealedOnly.Ciphertext) == 16+49); err != nil {
		return err
	}

	if err := streams(c); err != nil {
		return err
	}
	if err := checksums(); err != nil {
		return err
	}

	// Last: it switches the client to the successor.
	renewed, err := c.RenewToken(ctx, time.Hour)
	if err != nil {
		return err
	}
	if _, err := c.Seal(ctx, "default", []byte("x"), nil); err != nil {
		return err
	}
	return check("RenewToken: the client uses the successor", c.Token() == renewed.Token &&
		renewed.Token != os.Getenv("SEALBOX_TOKEN") && time.Until(renewed.Expiry) > 59*time.Minute)
}

func batches(c *sealbox.Client) error {
	sealedItems, err := c.SealBatch(ctx, []sealbox.SealItem{
		{Key: "default", Plaintext: []byte("alpha"), AAD: []byte("a")},
		{Key: "missing", Plaintext: []byte("bravo")},
		{Key: "default", Plaintext: []byte("charlie")},
	})
	if err != nil {
		return err
	}
	if err := wantError("SealBatch: the item for a missing key", sealedItems[1].Err, "NotFoundError"); err != nil {
		return err
	}
	if sealedItems[0].Err != nil || sealedItems[2].Err != nil {
		return fmt.Errorf("SealBatch: %v %v", sealedItems[0].Err, sealedItems[2].Err)
	}
	items := []sealbox.CiphertextItem{
		{Key: "default", Ciphertext: sealedItems[0].Sealed.Ciphertext, AAD: []byte("a")},
		{Key: "default", Ciphertext: flip(sealedItems[2].Sealed.Ciphertext, 45)},
		{Key: "default", Ciphertext: sealedItems[2].Sealed.Ciphertext},
	}
	openedItems, err := c.OpenBatch(ctx, items)
	if err != nil {
		return err
	}
	if err := wantError("OpenBatch: the tampered item", openedItems[1].Err, "DecryptionFailedError"); err != nil {
		return err
	}
	if err := check("OpenBatch: the others", openedItems[0].Err == nil && openedItems[2].Err == nil &&
		string(openedItems[0].Opened.Plaintext) == "alpha" &&
		string(openedItems[2].Opened.Plaintext) == "charlie"); err != nil {
		return err
	}
	rewrapped, err := c.RewrapBatch(ctx, items)
	if err != nil {
		return err
	}
	if err := wantError("RewrapBatch: the tampered item", rewrapped[1].Err, "DecryptionFailedError"); err != nil {
		return err
	}
	return check("RewrapBatch: the others", rewrapped[0].Err == nil && rewrapped[2].Err == nil &&
		len(rewrapped[0].Rewrapped.Ciphertext) == 5+49)
}

func streams(c *sealbox.Client) error {
	payload := random(3<<20 + 5)
	var sealed, opened bytes.Buffer
	var progress int64
	s, err := c.SealStream(ctx, "default", []byte("s"), bytes.NewReader(payload), &sealed,
		sealbox.WithChunkSize(100_000), sealbox.WithProgress(func(done, total int64) { progress = done }))
	if err != nil {
		return err
	}
	o, err := c.OpenStream(ctx, "default", []byte("s"), bytes.NewReader(sealed.Bytes()), &opened)
	if err != nil {
		return err
	}
	// 48-byte header, 48 full segments of 64 KiB + 16, the last 5 + 16 bytes.
	if err := check("SealStream and OpenStream", bytes.Equal(opened.Bytes(), payload) &&
		sealed.Len() == 48+48*65552+5+16 && s.BytesIn == int64(len(payload)) &&
		o.BytesOut == int64(len(payload)) && progress == int64(len(payload))); err != nil {
		return err
	}
	_, err = c.OpenStream(ctx, "default", []byte("s"), bytes.NewReader(flip(sealed.Bytes(), 100_000)), io.Discard)
	if err := wantError("OpenStream of a tampered stream", err, "DecryptionFailedError"); err != nil {
		return err
	}
	truncated := sealed.Bytes()[:sealed.Len()-21]
	_, err = c.OpenStream(ctx, "default", []byte("s"), bytes.NewReader(truncated), io.Discard)
	return wantError("OpenStream of a truncated stream", err, "DecryptionFailedError")
}

// checksums: a request whose CRC32C is wrong on the way (changed by an
// interceptor after the library set it) is refused by the server, and an answer
// whose CRC32C is wrong is refused by the library.
func checksums() error {
	corruptRequest := grpc.WithUnaryInterceptor(func(ctx context.Context, method string, req,
		reply interface{}, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		crc := reflect.ValueOf(req).Elem().FieldByName("PlaintextCrc32C").Interface().(*wrappers.UInt32Value)
		crc.Value ^= 1
		return invoker(ctx, method, req, reply, cc, opts...)
	})
	c := client(sealbox.WithDialOptions(corruptRequest))
	_, err := c.Seal(ctx, "default", []byte("x"), nil)
	c.Close()
	var invalid *sealbox.InvalidArgumentError
	if err := check("a request with a wrong CRC32C: InvalidArgumentError \"checksum mismatch\"",
		errors.As(err, &invalid) && strings.Contains(invalid.Message, "checksum mismatch")); err != nil {
		return fmt.Errorf("%w (%v)", err, err)
	}

	corruptAnswer := grpc.WithUnaryInterceptor(func(ctx context.Context, method string, req,
		reply interface{}, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		err := invoker(ctx, method, req, reply, cc, opts...)
		crc := reflect.ValueOf(reply).Elem().FieldByName("CiphertextCrc32C")
		crc.SetUint(crc.Uint() ^ 1)
		return err
	})
	c = client(sealbox.WithDialOptions(corruptAnswer))
	defer c.Close()
	sealed, err := c.Seal(ctx, "default", []byte("x"), nil)
	if err := wantError("an answer with a wrong CRC32C", err, "ChecksumError"); err != nil {
		return err
	}
	return check("nothing returned with a ChecksumError", sealed == nil)
}

// files IN: SealFile and OpenFile of IN (to IN.sealed, IN.out), with progress.
func files(args []string) error {
	in := args[0]
	c := client()
	defer c.Close()
	var calls int
	var last, total int64
	progress := sealbox.WithProgress(func(done, all int64) { calls, last, total = calls+1, done, all })
	started := time.Now()
	s, err := c.SealFile(ctx, "default", []byte(in), in, in+".sealed", progress,
		sealbox.WithSegmentSize(1<<20))
	if err != nil {
		return err
	}
	sealTime := time.Since(started)
	if err := check(fmt.Sprintf("SealFile: %d bytes -> %d in %.1f s, progress %d calls, %d of %d",
		s.BytesIn, s.BytesOut, sealTime.Seconds(), calls, last, total),
		last == total && total == s.BytesIn && calls > 1); err != nil {
		return err
	}
	started = time.Now()
	o, err := c.OpenFile(ctx, "default", []byte(in), in+".sealed", in+".out", progress)
	if err != nil {
		return err
	}
	return check(fmt.Sprintf("OpenFile: %d bytes -> %d in %.1f s", o.BytesIn, o.BytesOut,
		time.Since(started).Seconds()), o.BytesOut == s.BytesIn && last == total)
}

// gap unary|stream: one call to warm the channel, "ready", then, after a line on
// stdin (the server has been stopped): the calls never retried fail at once, then
// the retried one waits out the gap until the server is back.
func gap(args []string) error {
	var mu sync.Mutex
	retries := 0
	c := client(sealbox.WithRetryPolicy(sealbox.RetryPolicy{MaxAttempts: 10,
		OnRetry: func(attempt int, err error, wait time.Duration) {
			mu.Lock()
			retries++
			mu.Unlock()
			fmt.Printf("retry after attempt %d: %v, waiting %v\n", attempt, err, wait.Round(time.Millisecond))
		}}))
	defer c.Close()
	count := func() int { mu.Lock(); defer mu.Unlock(); n := retries; retries = 0; return n }
	if _, err := c.Seal(ctx, "default", []byte("warm"), nil); err != nil {
		return err
	}
	fmt.Println("ready")
	bufio.NewReader(os.Stdin).ReadString('\n')

	_, err := c.RenewToken(ctx, 0)
	if err := wantError("RenewToken while the server is down", err, "UnavailableError"); err != nil {
		return err
	}
	if err := check("RenewToken is never retried", count() == 0); err != nil {
		return err
	}
	pipe, w := io.Pipe()
	go func() { w.Write([]byte("not seekable")); w.Close() }()
	_, err = c.SealStream(ctx, "default", nil, pipe, io.Discard)
	if err := wantError("SealStream of a pipe while the server is down", err, "UnavailableError"); err != nil {
		return err
	}
	if err := check("a stream whose input cannot be read again is not retried", count() == 0); err != nil {
		return err
	}

	started := time.Now()
	if args[0] == "unary" {
		sealed, err := c.Seal(ctx, "default", []byte("across the restart"), nil)
		if err != nil {
			return err
		}
		if _, err := c.Open(ctx, "default", sealed.Ciphertext, nil); err != nil {
			return err
		}
	} else {
		var out bytes.Buffer
		if _, err := c.SealStream(ctx, "default", nil, bytes.NewReader(random(200_000)), &out); err != nil {
			return err
		}
	}
	n := count()
	return check(fmt.Sprintf("%s call across the restart: OK after %d retries in %.1f s",
		args[0], n, time.Since(started).Seconds()), n > 0)
}

// renew EXPIRY SECONDS: calls for SECONDS with a token expiring at EXPIRY (unix
// seconds), on two clients: one renewing at its first call (expiry unknown), one
// told the expiry. Then the original token must have expired.
func renew(args []string) error {
	expiry, _ := strconv.ParseInt(args[0], 10, 64)
	seconds, _ := strconv.Atoi(args[1])
	var mu sync.Mutex
	renewals := map[string]int{}
	renewing := func(name string, known time.Time) *sealbox.Client {
		return client(sealbox.WithTokenRenewal(sealbox.TokenRenewal{
			Expiry: known,
			OnRenew: func(token string, expiry time.Time) {
				mu.Lock()
				renewals[name]++
				mu.Unlock()
				fmt.Printf("%s: renewed, expires in %.1f s\n", name, time.Until(expiry).Seconds())
			},
			OnError: func(err error) { fmt.Printf("%s: renewal failed: %v\n", name, err) },
		}))
	}
	clients := map[string]*sealbox.Client{
		"unknown expiry": renewing("unknown expiry", time.Time{}),
		"known expiry":   renewing("known expiry", time.Unix(expiry, 0)),
	}
	calls := 0
	for end := time.Now().Add(time.Duration(seconds) * time.Second); time.Now().Before(end); {
		for name, c := range clients {
			if _, err := c.Seal(ctx, "default", []byte("x"), nil); err != nil {
				return fmt.Errorf("%s: call %d, %.1f s past the original expiry: %w",
					name, calls, time.Since(time.Unix(expiry, 0)).Seconds(), err)
			}
			calls++
		}
		time.Sleep(200 * time.Millisecond)
	}
	past := time.Since(time.Unix(expiry, 0)).Seconds()
	if err := check(fmt.Sprintf("%d calls, the last %.1f s past the original expiry, renewals %v",
		calls, past, renewals), past > 1 && renewals["unknown expiry"] >= 2 &&
		renewals["known expiry"] >= 1); err != nil {
		return err
	}
	original := client(sealbox.WithRetryPolicy(sealbox.RetryPolicy{MaxAttempts: 1}))
	_, err := original.Seal(ctx, "default", []byte("x"), nil)
	return wantError("the original token after its expiry", err, "UnauthenticatedError")
}

// tls CA CERT KEY: mTLS with a client certificate the server maps to a tenant.
func mtls(args []string) error {
	c, err := sealbox.New(os.Getenv("SEALBOX_SERVER"), sealbox.WithCAFile(args[0]),
		sealbox.WithClientCertificate(args[1], args[2]), sealbox.WithServerName("localhost"))
	if err != nil {
		return err
	}
	defer c.Close()
	sealed, err := c.Seal(ctx, "default", []byte("over mtls"), nil)
	if err != nil {
		return err
	}
	opened, err := c.Open(ctx, "default", sealed.Ciphertext, nil)
	if err != nil {
		return err
	}
	if err := check("mTLS: Seal and Open", string(opened.Plaintext) == "over mtls"); err != nil {
		return err
	}
	_, err = c.RenewToken(ctx, 0)
	if err := wantError("RenewToken with a client certificate", err, "FailedPreconditionError"); err != nil {
		return err
	}
	plain := client(sealbox.WithRetryPolicy(sealbox.RetryPolicy{MaxAttempts: 1}))
	defer plain.Close()
	_, err = plain.Seal(ctx, "default", []byte("x"), nil)
	return wantError("plaintext to the TLS server", err, "UnavailableError")
}
