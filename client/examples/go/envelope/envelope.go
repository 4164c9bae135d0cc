// Package envelope writes and reads sealbox's envelope file (docs/FORMAT.md,
// "Envelope file (0x03)"): data encrypted here, locally, with AES-256-GCM under a
// fresh data key from the service's GenerateDataKey, with the sealed data key kept
// in the file's header. Only the data key (81 bytes sealed) crosses the network,
// never the data.
//
//	header    = 0x03 | S (u32 BE) | nonce prefix (7) | L (u16 BE) | sealed data key (L)
//	segment i = AES-256-GCM(data key, nonce = prefix || i (u32 BE) || last flag,
//	                        AAD = header[0:12], plaintext i) = ciphertext || tag (16)
//
// Every segment holds exactly S plaintext bytes except the last, which holds fewer
// (possibly none) and is the only one sealed with the last flag (0x01). So
// truncation, reordering and appended bytes all fail authentication, and both
// directions need memory for one segment only, however large the file.
package envelope

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

const (
	// SegmentSize is S for the files written here: 1 MiB of plaintext per segment.
	SegmentSize = 1 << 20

	format        = 0x03
	minSegment    = 4096    // S is a power of two from 4 KiB ...
	maxSegment    = 4 << 20 // ... to 4 MiB
	minSealedKey  = 49      // L, the sealed key's length: from 49 ...
	maxSealedKey  = 1024    // ... to 1024, as docs/FORMAT.md bounds it
	fixedHeader   = 14      // format, S, nonce prefix, L
	segmentAADLen = 12      // header bytes 0..11: format, S, nonce prefix
	tagSize       = 16
	dataKeySize   = 32 // AES-256
)

// Keys is what the envelope needs from sealbox. Both calls bind the data key to
// aad: a file sealed with some associated data opens only with the same bytes.
type Keys interface {
	// NewDataKey returns a fresh 32-byte data key and its sealed form
	// (GenerateDataKey with include_plaintext).
	NewDataKey(ctx context.Context, aad []byte) (key, sealed []byte, err error)
	// OpenDataKey returns the data key that sealed holds (Open).
	OpenDataKey(ctx context.Context, sealed, aad []byte) (key []byte, err error)
}

// Seal writes the envelope file of everything r holds to w.
func Seal(ctx context.Context, keys Keys, aad []byte, r io.Reader, w io.Writer) error {
	key, sealed, err := keys.NewDataKey(ctx, aad)
	if err != nil {
		return fmt.Errorf("envelope: getting a data key: %w", err)
	}
	defer wipe(key)
	if len(key) != dataKeySize {
		return fmt.Errorf("envelope: the data key is %d bytes, want %d", len(key), dataKeySize)
	}
	if len(sealed) < minSealedKey || len(sealed) > maxSealedKey {
		return fmt.Errorf("envelope: the sealed data key is %d bytes, want %d to %d",
			len(sealed), minSealedKey, maxSealedKey)
	}

	header := make([]byte, fixedHeader+len(sealed))
	header[0] = format
	binary.BigEndian.PutUint32(header[1:5], SegmentSize)
	if _, err := rand.Read(header[5:12]); err != nil {
		return fmt.Errorf("envelope: drawing the nonce prefix: %w", err)
	}
	binary.BigEndian.PutUint16(header[12:14], uint16(len(sealed)))
	copy(header[fixedHeader:], sealed)
	segs, err := newSegments(key, header)
	if err != nil {
		return err
	}
	if _, err := w.Write(header); err != nil {
		return err
	}

	plaintext := make([]byte, SegmentSize)
	var sealedSegment []byte
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		// A full read is a full segment, so never the last one: the last holds
		// fewer than S bytes, none at all when the input is a multiple of S.
		n, err := io.ReadFull(r, plaintext)
		last := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !last {
			return fmt.Errorf("envelope: reading the input: %w", err)
		}
		if sealedSegment, err = segs.seal(sealedSegment[:0], plaintext[:n], last); err != nil {
			return err
		}
		if _, err := w.Write(sealedSegment); err != nil {
			return err
		}
		if last {
			return nil
		}
	}
}

// Open writes the plaintext of the envelope file r holds to w, each segment only
// after its tag verified. Open can fail after writing some verified segments (at a
// truncated end, say): on any error the caller must discard everything written, as
// OpenFile does.
func Open(ctx context.Context, keys Keys, aad []byte, r io.Reader, w io.Writer) error {
	header, segmentSize, err := readHeader(r)
	if err != nil {
		return err
	}
	key, err := keys.OpenDataKey(ctx, header[fixedHeader:], aad)
	if err != nil {
		return fmt.Errorf("envelope: opening the data key (is it the key name and "+
			"associated data the file was sealed with?): %w", err)
	}
	defer wipe(key)
	if len(key) != dataKeySize {
		return fmt.Errorf("envelope: the data key is %d bytes, want %d", len(key), dataKeySize)
	}
	segs, err := newSegments(key, header)
	if err != nil {
		return err
	}

	sealedSegment := make([]byte, segmentSize+tagSize)
	var plaintext []byte
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		// S+16 bytes are always a segment that is not the last (the last is shorter);
		// what is left at the end of the file, 16 to S+15 bytes, is the last.
		n, err := io.ReadFull(r, sealedSegment)
		last := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !last {
			return fmt.Errorf("envelope: reading the input: %w", err)
		}
		if last && n < tagSize {
			return errors.New("envelope: the file is truncated: it does not end with a last segment")
		}
		if plaintext, err = segs.open(plaintext[:0], sealedSegment[:n], last); err != nil {
			return err
		}
		if _, err := w.Write(plaintext); err != nil {
			return err
		}
		if last {
			return nil
		}
	}
}

// readHeader reads and checks the header: (the whole header, S).
func readHeader(r io.Reader) ([]byte, int, error) {
	header := make([]byte, fixedHeader, fixedHeader+maxSealedKey)
	if _, err := io.ReadFull(r, header); err != nil {
		return nil, 0, headerError(err)
	}
	if header[0] != format {
		return nil, 0, fmt.Errorf("envelope: not an envelope file (format byte 0x%02x, want 0x%02x)",
			header[0], format)
	}
	s := binary.BigEndian.Uint32(header[1:5])
	if s < minSegment || s > maxSegment || s&(s-1) != 0 {
		return nil, 0, fmt.Errorf("envelope: bad segment size %d in the header "+
			"(want a power of two from %d to %d)", s, minSegment, maxSegment)
	}
	l := int(binary.BigEndian.Uint16(header[12:14]))
	if l < minSealedKey || l > maxSealedKey {
		return nil, 0, fmt.Errorf("envelope: bad sealed key length %d in the header (want %d to %d)",
			l, minSealedKey, maxSealedKey)
	}
	header = header[:fixedHeader+l]
	if _, err := io.ReadFull(r, header[fixedHeader:]); err != nil {
		return nil, 0, headerError(err)
	}
	return header, int(s), nil
}

func headerError(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errors.New("envelope: not an envelope file (shorter than its header)")
	}
	return fmt.Errorf("envelope: reading the input: %w", err)
}

// segments seals or opens the segments of one file, in order: one AES-GCM key,
// and the nonce prefix and AAD the header fixes.
type segments struct {
	aead  cipher.AEAD
	aad   []byte   // header[0:12]
	nonce [12]byte // prefix (7) || index (u32 BE) || last flag
	index uint64   // the next segment's
}

func newSegments(key, header []byte) (*segments, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	s := &segments{aead: aead, aad: header[:segmentAADLen]}
	copy(s.nonce[:7], header[5:12])
	return s, nil
}

// next sets the nonce for the next segment and counts it.
func (s *segments) next(last bool) ([]byte, error) {
	if s.index > math.MaxUint32 {
		return nil, errors.New("envelope: more than 2^32 segments")
	}
	binary.BigEndian.PutUint32(s.nonce[7:11], uint32(s.index))
	s.nonce[11] = 0x00
	if last {
		s.nonce[11] = 0x01
	}
	s.index++
	return s.nonce[:], nil
}

func (s *segments) seal(dst, plaintext []byte, last bool) ([]byte, error) {
	nonce, err := s.next(last)
	if err != nil {
		return nil, err
	}
	return s.aead.Seal(dst, nonce, plaintext, s.aad), nil
}

func (s *segments) open(dst, sealed []byte, last bool) ([]byte, error) {
	index := s.index
	nonce, err := s.next(last)
	if err != nil {
		return nil, err
	}
	plaintext, err := s.aead.Open(dst, nonce, sealed, s.aad)
	if err != nil {
		return nil, fmt.Errorf("envelope: segment %d does not authenticate "+
			"(the file was changed, truncated, reordered or extended)", index)
	}
	return plaintext, nil
}

// wipe zeroes a data key once it is no longer needed. Go keeps copies this cannot
// reach (the AES key schedule, gRPC's receive buffers): it narrows the window in
// which the key sits in memory, it does not close it.
func wipe(b []byte) {
	for i := range b {
		b[i] = 0
	}
}
