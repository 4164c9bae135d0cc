package main

// The KMS v2 plugin as kube-apiserver's kmsv2 envelope code calls it: over a unix
// socket, each call under its own timeout (3 s by default), and each answer checked
// the way kube-apiserver checks it before it trusts it.

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"time"

	"google.golang.org/grpc"

	pb "apiserver.standin/kmsv2"
)

const (
	keyIDMaxSize       = 1024      // kube-apiserver: KeyIDMaxSize
	encryptedMaxSize   = 1024      // the encrypted seed (encryptedDEKSourceMaxSize)
	annotationsMaxSize = 32 * 1024 // keys and values together
)

type plugin struct {
	conn    *grpc.ClientConn
	kms     pb.KeyManagementServiceClient
	timeout time.Duration
}

func dial(socket string, timeout time.Duration) (*plugin, error) {
	// As kube-apiserver: the socket is the only address, WaitForReady rides out a
	// plugin that is not up yet (within each call's timeout).
	conn, err := grpc.Dial("passthrough:///kms", grpc.WithInsecure(),
		grpc.WithAuthority("localhost"), grpc.WithDefaultCallOptions(grpc.WaitForReady(true)),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", socket)
		}))
	if err != nil {
		return nil, err
	}
	return &plugin{conn: conn, kms: pb.NewKeyManagementServiceClient(conn), timeout: timeout}, nil
}

// status is Status with kube-apiserver's checks: version v2, healthz "ok", a key_id
// neither empty nor too long. An error says which failed.
func (p *plugin) status() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	r, err := p.kms.Status(ctx, &pb.StatusRequest{})
	if err != nil {
		return "", fmt.Errorf("Status: %w", err)
	}
	if r.Version != "v2" {
		return "", fmt.Errorf("Status: version %q, not v2", r.Version)
	}
	if r.Healthz != "ok" {
		return "", fmt.Errorf("Status: unexpected healthz: %s", r.Healthz)
	}
	if err := validateKeyID(r.KeyId); err != nil {
		return "", fmt.Errorf("Status: %w", err)
	}
	return r.KeyId, nil
}

// encrypt wraps a seed and checks the answer as kube-apiserver does before it keeps
// it: a key_id other than Status's makes it throw the answer away.
func (p *plugin) encrypt(seed []byte, uid, statusKeyID string) (*pb.EncryptResponse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	r, err := p.kms.Encrypt(ctx, &pb.EncryptRequest{Plaintext: seed, Uid: uid})
	if err != nil {
		return nil, fmt.Errorf("Encrypt: %w", err)
	}
	if err := validateKeyID(r.KeyId); err != nil {
		return nil, fmt.Errorf("Encrypt: %w", err)
	}
	if r.KeyId != statusKeyID {
		return nil, fmt.Errorf("Encrypt: key_id %q differs from Status's %q: answer discarded",
			r.KeyId, statusKeyID)
	}
	if len(r.Ciphertext) == 0 || len(r.Ciphertext) > encryptedMaxSize {
		return nil, fmt.Errorf("Encrypt: ciphertext of %d bytes (1 to %d allowed)",
			len(r.Ciphertext), encryptedMaxSize)
	}
	if err := validateAnnotations(r.Annotations); err != nil {
		return nil, fmt.Errorf("Encrypt: %w", err)
	}
	return r, nil
}

func (p *plugin) decrypt(ciphertext []byte, keyID, uid string,
	annotations map[string][]byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	r, err := p.kms.Decrypt(ctx, &pb.DecryptRequest{Ciphertext: ciphertext, KeyId: keyID, Uid: uid,
		Annotations: annotations})
	if err != nil {
		return nil, fmt.Errorf("Decrypt: %w", err)
	}
	return r.Plaintext, nil
}

func validateKeyID(keyID string) error {
	if keyID == "" {
		return fmt.Errorf("empty key_id")
	}
	if len(keyID) > keyIDMaxSize {
		return fmt.Errorf("key_id of %d bytes (at most %d)", len(keyID), keyIDMaxSize)
	}
	return nil
}

// A fully qualified domain name: DNS-1123 labels, at least two.
var fqdn = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$`)

func validateAnnotations(annotations map[string][]byte) error {
	total := 0
	for k, v := range annotations {
		if !fqdn.MatchString(k) || len(k) > 253 {
			return fmt.Errorf("annotation key %q is not a fully qualified domain name", k)
		}
		total += len(k) + len(v)
	}
	if total > annotationsMaxSize {
		return fmt.Errorf("annotations of %d bytes (at most %d)", total, annotationsMaxSize)
	}
	return nil
}
