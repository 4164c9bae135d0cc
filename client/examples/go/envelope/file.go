package envelope

import (
	"context"
	"io"
	"os"
	"path/filepath"
)

// SealFile seals the file in into the envelope file out.
func SealFile(ctx context.Context, keys Keys, aad []byte, in, out string) error {
	return viaTemporary(in, out, func(r io.Reader, w io.Writer) error {
		return Seal(ctx, keys, aad, r, w)
	})
}

// OpenFile opens the envelope file in into out. out appears only once every
// segment verified: a damaged or truncated file leaves nothing behind.
func OpenFile(ctx context.Context, keys Keys, aad []byte, in, out string) error {
	return viaTemporary(in, out, func(r io.Reader, w io.Writer) error {
		return Open(ctx, keys, aad, r, w)
	})
}

// viaTemporary runs transform from the file in to a temporary file beside out
// (mode 0600, in the same directory so the rename stays on one file system), and
// renames it to out only once transform succeeded and the data is on disk. On any
// error the temporary file is removed and out is left as it was.
func viaTemporary(in, out string, transform func(io.Reader, io.Writer) error) (err error) {
	src, err := os.Open(in)
	if err != nil {
		return err
	}
	defer src.Close()
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".partial-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = transform(src, tmp); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), out)
}
