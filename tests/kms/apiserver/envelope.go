package main

// kube-apiserver's KMS v2 envelope with KDF (Kubernetes 1.29 and later): a 32-byte
// seed per key_id, wrapped once by the plugin; each object sealed locally under
// AES-256-GCM with its own key, HKDF-SHA256-Expand(seed, info = 32 random bytes),
// a random 12-byte nonce, and the object's etcd key as associated data. What is
// stored per object: info || nonce || ciphertext || tag, beside the key_id and the
// wrapped seed it needs.

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"

	"golang.org/x/crypto/hkdf"
)

const (
	seedBytes  = 32
	infoBytes  = 32
	nonceBytes = 12
)

// writeState is what kube-apiserver seals new objects with: a seed and what the
// plugin answered for it.
type writeState struct {
	seed          []byte
	keyID         string
	encryptedSeed []byte
	annotations   map[string][]byte
}

// object is one stored object, as etcd would hold it (EncryptedObject's fields).
type object struct {
	Name          string            `json:"name"` // the etcd key: associated data
	KeyID         string            `json:"key_id"`
	EncryptedSeed []byte            `json:"encrypted_seed"`
	Annotations   map[string][]byte `json:"annotations,omitempty"`
	Data          []byte            `json:"data"` // info || nonce || ciphertext || tag
}

func newSeed() ([]byte, error) {
	seed := make([]byte, seedBytes)
	_, err := io.ReadFull(rand.Reader, seed)
	return seed, err
}

func objectAEAD(seed, info []byte) (cipher.AEAD, error) {
	key := make([]byte, 32)
	if _, err := io.ReadFull(hkdf.Expand(sha256.New, seed, info), key); err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func (s *writeState) seal(name string, plaintext []byte) (*object, error) {
	header := make([]byte, infoBytes+nonceBytes)
	if _, err := io.ReadFull(rand.Reader, header); err != nil {
		return nil, err
	}
	aead, err := objectAEAD(s.seed, header[:infoBytes])
	if err != nil {
		return nil, err
	}
	data := aead.Seal(header, header[infoBytes:], plaintext, []byte(name))
	return &object{Name: name, KeyID: s.keyID, EncryptedSeed: s.encryptedSeed,
		Annotations: s.annotations, Data: data}, nil
}

func openObject(seed []byte, o *object) ([]byte, error) {
	if len(o.Data) < infoBytes+nonceBytes {
		return nil, fmt.Errorf("%s: stored data too short", o.Name)
	}
	aead, err := objectAEAD(seed, o.Data[:infoBytes])
	if err != nil {
		return nil, err
	}
	plaintext, err := aead.Open(nil, o.Data[infoBytes:infoBytes+nonceBytes],
		o.Data[infoBytes+nonceBytes:], []byte(o.Name))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.Name, err)
	}
	return plaintext, nil
}
