package sealbox

// Envelope files (docs/FORMAT.md, "Envelope file (0x03)"): data encrypted here,
// locally, with AES-256-GCM under a fresh data key from GenerateDataKey, the
// sealed data key kept in the file's header. Only the data key (81 bytes sealed)
// crosses the network, never the data.
//
//	header    = 0x03 | S (u32 BE) | nonce prefix (7) | L (u16 BE) | sealed data key (L)
//	segment i = AES-256-GCM(data key, nonce = prefix || i (u32 BE) || last flag,
//	                        AAD = header[0:12], plaintext i) = ciphertext || tag (16)
//
// Every segment holds exactly S plaintext bytes except the last, which holds fewer
// (possibly none) and alone has the last flag (0x01). So truncation, reordering and
// appended bytes all fail authentication, and both directions hold one segment in
// memory however large the file.

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"

	"google.golang.org/grpc/codes"
)

const (
	// EnvelopeSegmentSize is S in the envelope files written here: 1 MiB.
	EnvelopeSegmentSize = 1 << 20

	envelopeFormat  = 0x03
	minSegment      = 4096    // S is a power of two from 4 KiB ...
	maxSegment      = 4 << 20 // ... to 4 MiB
	minSealedKey    = 49      // L: a unary ciphertext's minimum ...
	maxSealedKey    = 1024    // ... to 1024, as docs/FORMAT.md bounds it
	fixedHeader     = 14      // format, S, nonce prefix, L
	segmentAADBytes = 12      // header bytes 0..11: format, S, nonce prefix
	tagBytes        = 16
	dataKeyBytes    = 32 // AES-256
)

// SealEnvelope writes the envelope file of everything r holds to w: a fresh data
// key from GenerateDataKey under key, bound to aad (OpenEnvelope needs the same),
// and the data encrypted here in 1 MiB segments. Retried as GenerateDataKey is.
func (c *Client) SealEnvelope(ctx context.Context, key string, aad []byte, r io.Reader,
	w io.Writer, opts ...StreamOption) (*StreamResult, error) {
	s := newStreamSettings(opts)
	dataKey, err := c.GenerateDataKey(ctx, key, aad, DataKeyOptions{Size: dataKeyBytes,
		IncludePlaintext: true})
	if err != nil {
		return nil, err
	}
	defer wipe(dataKey.Plaintext)
	sealedKey := dataKey.Ciphertext
	if len(dataKey.Plaintext) != dataKeyBytes || len(sealedKey) < minSealedKey ||
		len(sealedKey) > maxSealedKey {
		return nil, &SealboxError{Code: codes.Internal, Message: fmt.Sprintf(
			"envelope: GenerateDataKey gave a %d-byte key sealed in %d bytes",
			len(dataKey.Plaintext), len(sealedKey))}
	}

	header := make([]byte, fixedHeader+len(sealedKey))
	header[0] = envelopeFormat
	binary.BigEndian.PutUint32(header[1:5], EnvelopeSegmentSize)
	if _, err := rand.Read(header[5:12]); err != nil {
		return nil, fmt.Errorf("sealbox: envelope: drawing the nonce prefix: %w", err)
	}
	binary.BigEndian.PutUint16(header[12:14], uint16(len(sealedKey)))
	copy(header[fixedHeader:], sealedKey)
	segs, err := newSegments(dataKey.Plaintext, header)
	if err != nil {
		return nil, err
	}
	result := &StreamResult{KeyVersion: dataKey.KeyVersion}
	if err := write(w, header, result); err != nil {
		return nil, err
	}

	// A full read is a full segment, so never the last one: the last holds fewer
	// than S bytes, none at all when the input is a multiple of S.
	return eachSegment(ctx, &s, r, w, result, EnvelopeSegmentSize, segs.seal)
}

// OpenEnvelope writes the plaintext of the envelope file r holds to w, each
// segment only after its tag verified. It can fail after writing verified
// segments (at a truncated end, say): on any error discard everything w received,
// as OpenEnvelopeFile does. Errors: an *EnvelopeFormatError for a file that is not
// an envelope or has a damaged header; a *DecryptionFailedError for a segment that
// does not verify, a truncated file, or a data key that does not open (the wrong
// key name or aad).
func (c *Client) OpenEnvelope(ctx context.Context, key string, aad []byte, r io.Reader,
	w io.Writer, opts ...StreamOption) (*StreamResult, error) {
	return openEnvelope(ctx, func(sealedKey []byte) (*Opened, error) {
		return c.Open(ctx, key, sealedKey, aad)
	}, r, w, opts...)
}

// openEnvelope is OpenEnvelope with the sealed data key opened by openKey (Open, or
// the contract test's stand-in for it).
func openEnvelope(ctx context.Context, openKey func(sealedKey []byte) (*Opened, error),
	r io.Reader, w io.Writer, opts ...StreamOption) (*StreamResult, error) {
	s := newStreamSettings(opts)
	header, segmentSize, err := readEnvelopeHeader(r)
	if err != nil {
		return nil, err
	}
	opened, err := openKey(header[fixedHeader:])
	if err != nil {
		return nil, err
	}
	defer wipe(opened.Plaintext)
	if len(opened.Plaintext) != dataKeyBytes && len(opened.Plaintext) != 16 {
		return nil, envelopeFormatError("the data key is %d bytes", len(opened.Plaintext))
	}
	segs, err := newSegments(opened.Plaintext, header)
	if err != nil {
		return nil, err
	}
	result := &StreamResult{KeyVersion: opened.KeyVersion, BytesIn: int64(len(header))}

	// S+16 bytes are always a segment that is not the last (the last is shorter);
	// what is left at the end of the file, 16 to S+15 bytes, is the last.
	return eachSegment(ctx, &s, r, w, result, segmentSize+tagBytes,
		func(plaintext, sealed []byte, last bool) ([]byte, error) {
			if last && len(sealed) < tagBytes {
				return nil, segmentError("the file is truncated: it does not end with a last segment")
			}
			return segs.open(plaintext, sealed, last)
		})
}

// eachSegment reads r in pieces of size bytes, a short piece (or none) being the
// last, and writes what transform makes of each to w, counting and reporting the
// bytes read; the sealing and the opening loop of envelope files.
func eachSegment(ctx context.Context, s *streamSettings, r io.Reader, w io.Writer,
	result *StreamResult, size int,
	transform func(dst, piece []byte, last bool) ([]byte, error)) (*StreamResult, error) {
	piece := make([]byte, size)
	var out []byte
	for {
		if err := ctx.Err(); err != nil {
			return nil, fromRPC(err)
		}
		n, err := io.ReadFull(r, piece)
		last := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !last {
			return nil, fmt.Errorf("sealbox: reading the input: %w", err)
		}
		if out, err = transform(out[:0], piece[:n], last); err != nil {
			return nil, err
		}
		if err := write(w, out, result); err != nil {
			return nil, err
		}
		result.BytesIn += int64(n)
		if s.progress != nil {
			s.progress(result.BytesIn, s.total)
		}
		if last {
			return result, nil
		}
	}
}

// SealEnvelopeFile seals the file in into the envelope file out, written beside
// it and renamed only when complete, as SealFile.
func (c *Client) SealEnvelopeFile(ctx context.Context, key string, aad []byte, in, out string,
	opts ...StreamOption) (*StreamResult, error) {
	return viaTemporary(in, out, func(r *os.File, size int64, w io.Writer) (*StreamResult, error) {
		return c.SealEnvelope(ctx, key, aad, r, w, append(opts, withTotal(size))...)
	})
}

// OpenEnvelopeFile opens the envelope file in into out, which appears only once
// every segment verified: a damaged file leaves nothing behind.
func (c *Client) OpenEnvelopeFile(ctx context.Context, key string, aad []byte, in, out string,
	opts ...StreamOption) (*StreamResult, error) {
	return viaTemporary(in, out, func(r *os.File, size int64, w io.Writer) (*StreamResult, error) {
		return c.OpenEnvelope(ctx, key, aad, r, w, append(opts, withTotal(size))...)
	})
}

func write(w io.Writer, b []byte, result *StreamResult) error {
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("sealbox: writing the output: %w", err)
	}
	result.BytesOut += int64(len(b))
	return nil
}

// readEnvelopeHeader reads and checks the header: (the whole header, S).
func readEnvelopeHeader(r io.Reader) ([]byte, int, error) {
	header := make([]byte, fixedHeader, fixedHeader+maxSealedKey)
	if _, err := io.ReadFull(r, header); err != nil {
		return nil, 0, headerReadError(err)
	}
	if header[0] != envelopeFormat {
		return nil, 0, envelopeFormatError("not an envelope file (format byte 0x%02x, want 0x%02x)",
			header[0], envelopeFormat)
	}
	s := binary.BigEndian.Uint32(header[1:5])
	if s < minSegment || s > maxSegment || s&(s-1) != 0 {
		return nil, 0, envelopeFormatError("bad segment size %d in the header "+
			"(want a power of two from %d to %d)", s, minSegment, maxSegment)
	}
	l := int(binary.BigEndian.Uint16(header[12:14]))
	if l < minSealedKey || l > maxSealedKey {
		return nil, 0, envelopeFormatError("bad sealed key length %d in the header (want %d to %d)",
			l, minSealedKey, maxSealedKey)
	}
	header = header[:fixedHeader+l]
	if _, err := io.ReadFull(r, header[fixedHeader:]); err != nil {
		return nil, 0, headerReadError(err)
	}
	return header, int(s), nil
}

func headerReadError(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return envelopeFormatError("not an envelope file (shorter than its header)")
	}
	return fmt.Errorf("sealbox: reading the input: %w", err)
}

func segmentError(format string, args ...interface{}) error {
	return newError(codes.InvalidArgument, "envelope: "+fmt.Sprintf(format, args...), true)
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
	s := &segments{aead: aead, aad: header[:segmentAADBytes]}
	copy(s.nonce[:7], header[5:12])
	return s, nil
}

// next sets the nonce for the next segment and counts it.
func (s *segments) next(last bool) ([]byte, error) {
	if s.index > math.MaxUint32 {
		return nil, envelopeFormatError("more than 2^32 segments")
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
		return nil, segmentError("segment %d does not authenticate "+
			"(the file was changed, truncated, reordered or extended)", index)
	}
	return plaintext, nil
}
