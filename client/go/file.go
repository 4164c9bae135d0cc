package sealbox

import (
	"context"
	"io"
	"os"
	"path/filepath"
)

// SealFile seals the file in into the stream ciphertext file out through
// SealStream. out is written as a temporary file beside it (mode 0600), synced,
// and renamed to out only once the stream completed: a failure leaves out as it
// was. Retried on UNAVAILABLE before the first answer (a file can be read again).
func (c *Client) SealFile(ctx context.Context, key string, aad []byte, in, out string,
	opts ...StreamOption) (*StreamResult, error) {
	return viaTemporary(in, out, func(r *os.File, size int64, w io.Writer) (*StreamResult, error) {
		return c.SealStream(ctx, key, aad, r, w, append(opts, withTotal(size))...)
	})
}

// OpenFile opens the stream ciphertext file in into out through OpenStream. out
// appears only once every segment verified, the last included: a damaged,
// truncated or extended file leaves nothing behind (and out as it was).
func (c *Client) OpenFile(ctx context.Context, key string, aad []byte, in, out string,
	opts ...StreamOption) (*StreamResult, error) {
	return viaTemporary(in, out, func(r *os.File, size int64, w io.Writer) (*StreamResult, error) {
		return c.OpenStream(ctx, key, aad, r, w, append(opts, withTotal(size))...)
	})
}

// viaTemporary runs transform from the file in to a temporary file beside out (in
// the same directory, so the rename stays on one file system), then makes it out:
// synced, renamed, and the directory synced so the rename is durable too. On any
// error the temporary file is removed and out is left as it was.
func viaTemporary(in, out string,
	transform func(r *os.File, size int64, w io.Writer) (*StreamResult, error)) (
	result *StreamResult, err error) {
	src, err := os.Open(in)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	size := int64(-1)
	if info, err := src.Stat(); err == nil && info.Mode().IsRegular() {
		size = info.Size()
	}
	dir := filepath.Dir(out)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(out)+".partial-*")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if result, err = transform(src, size, tmp); err != nil {
		return nil, err
	}
	if err = tmp.Sync(); err != nil {
		return nil, err
	}
	if err = tmp.Close(); err != nil {
		return nil, err
	}
	if err = os.Rename(tmp.Name(), out); err != nil {
		return nil, err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync() // best effort: the data is already safe under its name
		d.Close()
	}
	return result, nil
}
